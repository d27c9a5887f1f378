/**
 * `GET /docs`: the API reference, rendered in the browser by Redoc from
 * `/openapi.json`. The renderer comes from a CDN pinned to one version with a
 * subresource-integrity hash, so a changed or compromised file is refused rather
 * than run. Without it (blocked, offline) the page still names the document.
 */
import { escapeHtml, page, topBar } from "./layout";

// Update both together: the hash is of this exact file (sha384 of the npm package's bundles/redoc.standalone.js).
const REDOC_URL = "https://cdn.jsdelivr.net/npm/redoc@3.0.1/bundles/redoc.standalone.js";
const REDOC_SRI = "sha384-j07qRKHNNmcwU1/Y1elJc7pDLHXP/QfbQXTtSkbOJ7uYGJikqAzsFVbY2zR9FqOT";

// Redoc injects its own <style> elements and runs its search in a blob: worker.
const CSP = [
  "default-src 'none'",
  `script-src ${REDOC_URL}`,
  "style-src 'unsafe-inline'",
  "connect-src 'self'",
  "img-src data: https:",
  "font-src data: https:",
  "worker-src blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

// Redoc has no dark theme: keep the whole page light so the bar and the reference match.
const LIGHT_ONLY = `<style>:root { color-scheme: light; --fg: #1b1f24; --muted: #57606a; --bg: #ffffff; --panel: #f6f8fa; --line: #d0d7de; --accent: #0a58ca; }
.docs-bar { max-width: none; padding: .75rem 1rem .5rem; } .docs-bar header.top { border-bottom: 0; padding-bottom: 0; } redoc { display: block; border-top: 1px solid var(--line); }
.fallback { max-width: 62rem; margin: 0 auto; padding: 1.25rem; }</style>`;

export function docsPage(serviceName: string, baseUrl: string): Response {
  const documentUrl = `${baseUrl}/openapi.json`;
  const body = `<div class="wrap docs-bar">${topBar(serviceName)}</div>
<main id="main">
  <redoc spec-url="/openapi.json">
    <div class="fallback">
      <h1>${escapeHtml(serviceName)} API reference</h1>
      <p>The reference is rendered in your browser from the OpenAPI 3.1 document at
      <a href="/openapi.json"><code>${escapeHtml(documentUrl)}</code></a>.</p>
      <noscript><p>JavaScript is off: read <a href="/openapi.json">the document</a> directly, or open it in any OpenAPI viewer.</p></noscript>
      <p class="muted">If nothing appears, the renderer (<code>${escapeHtml(REDOC_URL)}</code>) could not be loaded; the document above is complete on its own.</p>
    </div>
  </redoc>
</main>
<script type="module" src="${REDOC_URL}" integrity="${REDOC_SRI}" crossorigin="anonymous"></script>`;
  return page({
    title: `${serviceName} API reference`,
    description: `API reference of ${serviceName}, rendered from its OpenAPI document.`,
    head: `<meta name="color-scheme" content="light">\n${LIGHT_ONLY}`,
    body,
    csp: CSP,
  });
}
