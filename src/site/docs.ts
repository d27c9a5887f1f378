/**
 * `GET /docs`: the API reference, rendered in the browser by Redoc from `/openapi.json`.
 * The renderer is served by this worker (`/vendor/…`, copied from the pinned npm package
 * into the static assets by scripts/site-assets.mjs), so the page needs no other origin:
 * it works offline, and no third party's script runs on the API's origin. The CSP says so.
 */
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { AppError } from "../http/errors";
import { escapeHtml, page, topBar } from "./layout";

/** Keep in step with the redoc version pinned in package.json (the file name carries it). */
export const REDOC_PATH = "/vendor/redoc-2.5.2.standalone.js";

// Redoc injects its own <style> elements, runs its search in a blob: worker, and draws icons as data: images.
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'unsafe-inline'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "worker-src blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

// Redoc has no dark theme: keep the whole page light so the bar and the reference match. Its default
// fonts are Google's: name system fonts instead, so the page asks no other origin for them either.
const LIGHT_ONLY = `<style>:root { color-scheme: light;
  --fg: #1b1f24; --muted: #57606a; --bg: #ffffff; --panel: #f6f8fa; --line: #d0d7de; --accent: #0a58ca; }
.docs-bar { max-width: none; padding: .75rem 1rem .5rem; } .docs-bar header.top { border-bottom: 0; padding-bottom: 0; }
redoc { display: block; border-top: 1px solid var(--line); }
.fallback { max-width: 62rem; margin: 0 auto; padding: 1.25rem; }</style>`;

const THEME = JSON.stringify({
  typography: {
    fontFamily: "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif",
    headings: { fontFamily: "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif" },
    code: { fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace" },
  },
});

export function docsPage(serviceName: string, baseUrl: string): Response {
  // Every kind with its fields' descriptions (the bare /openapi.json leaves those out to stay small).
  const documentUrl = `${baseUrl}/openapi.json?kinds=all`;
  const body = `<div class="wrap docs-bar">${topBar(serviceName)}</div>
<main id="main">
  <redoc spec-url="/openapi.json?kinds=all" theme='${escapeHtml(THEME)}'>
    <div class="fallback">
      <h1>${escapeHtml(serviceName)} API reference</h1>
      <p>The reference is rendered in your browser from the OpenAPI 3.1 document at
      <a href="/openapi.json?kinds=all"><code>${escapeHtml(documentUrl)}</code></a>.</p>
      <noscript><p>JavaScript is off: read <a href="/openapi.json?kinds=all">the document</a> directly, or open it
      in any OpenAPI viewer.</p></noscript>
    </div>
  </redoc>
</main>
<script src="${REDOC_PATH}"></script>`;
  return page({
    title: `${serviceName} API reference`,
    description: `API reference of ${serviceName}, rendered from its OpenAPI document.`,
    head: `<meta name="color-scheme" content="light">\n${LIGHT_ONLY}`,
    body,
    csp: CSP,
  });
}

/** `/vendor/…`: the static assets, versioned by name, so cached for good. */
export async function vendorAsset(c: Context<AppEnv>): Promise<Response> {
  const res = await c.env.ASSETS.fetch(c.req.raw);
  if (!res.ok)
    throw new AppError("not_found", "No such file. (Run `npm install`: it copies the renderer into public/.)");
  const headers = new Headers(res.headers);
  headers.set("Cache-Control", "public, max-age=31536000, immutable");
  headers.set("X-Content-Type-Options", "nosniff");
  return new Response(res.body, { status: res.status, headers });
}
