/**
 * The frame of the two human pages (`/` and `/docs`): escaping, one stylesheet,
 * security headers. No external asset is needed to read either page.
 */
import { toBase64, sha256, utf8 } from "../bytes";

/** Escapes text for HTML element content and double-quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

export const STYLE = `
:root { color-scheme: light dark;
  --fg: #1b1f24; --muted: #57606a; --bg: #ffffff; --panel: #f6f8fa; --line: #d0d7de; --accent: #0a58ca; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6edf3; --muted: #9da7b3; --bg: #0d1117; --panel: #161b22; --line: #30363d; --accent: #6cb6ff; }
}
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: var(--fg); background: var(--bg); }
.wrap { max-width: 62rem; margin: 0 auto; padding: 1.25rem 1.25rem 2rem; }
header.top { display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; align-items: baseline; justify-content: space-between;
  border-bottom: 1px solid var(--line); padding-bottom: .75rem; }
.brand { font-weight: 700; font-size: 1.15rem; color: var(--fg); text-decoration: none; }
nav ul { display: flex; flex-wrap: wrap; gap: .25rem 1.25rem; list-style: none; margin: 0; padding: 0; }
a { color: var(--accent); text-underline-offset: .15em; }
a:focus-visible, pre:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
h1 { font-size: clamp(1.5rem, 3.2vw, 2.1rem); line-height: 1.2; margin: 1.25rem 0 .5rem; }
h2 { font-size: 1.1rem; margin: 0 0 .4rem; }
p { margin: .4rem 0; }
.lead { font-size: 1.08rem; max-width: 46rem; }
.muted { color: var(--muted); }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 27rem), 1fr));
  gap: 1rem; margin: 1.25rem 0; }
section.card { border: 1px solid var(--line); border-radius: 8px; padding: 1rem; background: var(--bg); }
pre { margin: .5rem 0; padding: .75rem; overflow-x: auto; background: var(--panel); border: 1px solid var(--line);
  border-radius: 6px; font-size: .8rem; line-height: 1.45; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
p code, li code { background: var(--panel); padding: .05rem .3rem; border-radius: 4px; font-size: .9em; }
ul.facts { margin: .25rem 0 0; padding-left: 1.2rem; }
footer { border-top: 1px solid var(--line); margin-top: 1.25rem; padding-top: .75rem; font-size: .92rem; }
@media (max-width: 30rem) { .wrap { padding: 1rem .75rem 1.5rem; } section.card { padding: .75rem; } }
.skip { position: absolute; left: -999px; }
.skip:focus { left: 1rem; top: 1rem; background: var(--bg); padding: .25rem .5rem; }
`;

/** CSP source for an inline stylesheet: a hash, so no 'unsafe-inline' is needed. */
export const styleHash = (css: string) => `'sha256-${toBase64(sha256(utf8(css)))}'`;

/**
 * The policy of a page that is markup and inline stylesheets alone (the layout's, and `css`): nothing else loads,
 * nothing runs.
 */
export const staticCsp = (...css: string[]) =>
  `default-src 'none'; style-src ${[STYLE, ...css].map(styleHash).join(" ")}; img-src data:; base-uri ` +
  `'none'; form-action 'none'; frame-ancestors 'none'`;
export const STATIC_CSP = staticCsp();

export interface PageOptions {
  title: string;
  description: string;
  /** Extra <head> content (trusted markup). */
  head?: string;
  body: string;
  csp: string;
}

/**
 * The page as HTML text. `styleNonce` marks the stylesheet for a nonce-based policy (public
 * faces: kind/public-answer.ts fills `{{nonce}}`); without it the policy names its hash.
 */
export function htmlDocument(o: Omit<PageOptions, "csp"> & { styleNonce?: string; noindex?: boolean }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(o.title)}</title>
<meta name="description" content="${escapeHtml(o.description)}">
${o.noindex ? `<meta name="robots" content="noindex">\n` : ""}<link rel="icon" href="data:,">
<style${o.styleNonce ? ` nonce="${o.styleNonce}"` : ""}>${STYLE}</style>
${o.head ?? ""}
</head>
<body>
${o.body}
</body>
</html>`;
}

/** A one-message page for a person who opened an address that no longer answers (a closed form, a used-up link). */
export function gonePage(title: string, heading: string, detail: string): string {
  return htmlDocument({
    title,
    description: `${heading}.`,
    noindex: true,
    body: `<main id="main" class="wrap"><h1>${escapeHtml(heading)}</h1><p>${escapeHtml(detail)}</p></main>`,
  });
}

export function page(o: PageOptions): Response {
  const html = htmlDocument(o);
  return new Response(html, {
    headers: {
      "Content-Type": "text/html; charset=utf-8",
      "Content-Security-Policy": o.csp,
      "Cache-Control": "public, max-age=300",
      "X-Content-Type-Options": "nosniff",
      "Referrer-Policy": "no-referrer",
    },
  });
}

/** The navigation both pages share. */
export function topBar(serviceName: string): string {
  return `<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <a class="brand" href="/">${escapeHtml(serviceName)}</a>
  <nav aria-label="Main"><ul>
    <li><a href="/docs">API reference</a></li>
    <li><a href="/openapi.json">OpenAPI document</a></li>
    <li><a href="/v1/prices">Prices</a></li>
  </ul></nav>
</header>`;
}
