/**
 * The page a person sees at a bin's view link: the captures, newest first, each with its request
 * line, time, client, headers and body (text shown escaped, binary as a download). Plain HTML; the
 * stylesheet and the one script (times in the reader's zone) carry the response's nonce.
 */
import { escapeHtml, htmlDocument } from "../../../site/layout";
import { NONCE_SLOT } from "../../../kind/public-answer";
import { localTimesScript, timeHtml } from "../../../site/times";
import type { BinCapture } from "./schema";

/** Characters of a text body shown on the page; the raw link has all of it. */
const PREVIEW_CHARS = 16 * 1024;

const STYLE = `
main { max-width: 62rem; margin: 0 auto; padding: 1.25rem; }
article { border: 1px solid var(--line); border-radius: 8px; padding: .75rem 1rem; margin: 1rem 0; }
h2 { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 1rem; word-break: break-all; }
.method { font-weight: 700; margin-right: .5rem; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .15rem .75rem; margin: .5rem 0; font-size: .9rem; }
dt { color: var(--muted); }
dd { margin: 0; word-break: break-all; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
details { margin: .5rem 0; }
pre { white-space: pre-wrap; word-break: break-all; max-height: 24rem; overflow: auto; }
`;

function requestLine(c: BinCapture): string {
  const query = c.query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&");
  return `${c.path || "/"}${c.query.length ? `?${query}` : ""}`;
}

function bodyOf(c: BinCapture): string {
  const raw = c.raw_url ? ` <a href="${escapeHtml(c.raw_url)}">Download the raw body</a>` : "";
  if (c.size === 0) return `<p class="muted">No body.</p>`;
  if (c.body_text !== null) {
    const cut = c.body_text.length > PREVIEW_CHARS;
    return (
      `<pre>${escapeHtml(cut ? c.body_text.slice(0, PREVIEW_CHARS) : c.body_text)}</pre>` +
      `${cut ? `<p class="muted">Shown in part.${raw}</p>` : `<p>${raw}</p>`}`
    );
  }
  return `<p class="muted">${c.body_base64 !== null ? "Binary" : "Large"} body, ${c.size} bytes.${raw}</p>`;
}

function card(c: BinCapture): string {
  const headers = Object.entries(c.headers)
    .map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${escapeHtml(v)}</dd>`)
    .join("");
  return `<article id="capture-${c.seq}">
<h2><span class="method">${escapeHtml(c.method)}</span>${escapeHtml(requestLine(c))}</h2>
<dl><dt>#</dt><dd>${c.seq}</dd><dt>Received</dt><dd>${timeHtml(c.received_at, true)}</dd>
<dt>From</dt><dd>${escapeHtml(c.client_ip ?? "unknown")}</dd>
<dt>Size</dt><dd>${c.size} bytes</dd><dt>SHA-256</dt><dd>${c.sha256}</dd></dl>
<details><summary>Headers (${Object.keys(c.headers).length})</summary><dl>${headers}</dl></details>
${bodyOf(c)}
</article>`;
}

export function capturesPage(
  captures: BinCapture[],
  total: number,
  olderUrl: string | null,
  newestUrl: string,
): string {
  const nothing = `<p class="muted">Nothing captured${olderUrl === null && total === 0 ? " yet" : " here"}.</p>`;
  return htmlDocument({
    title: "Request bin",
    description: "Requests captured by a request bin.",
    noindex: true,
    styleNonce: NONCE_SLOT,
    head: `<style nonce="${NONCE_SLOT}">${STYLE}</style>`,
    body: `<main id="main"><h1>Request bin</h1>
<p>${total} request${total === 1 ? "" : "s"} captured, newest first. <a href="${escapeHtml(newestUrl)}">Refresh</a></p>
${captures.length ? captures.map(card).join("\n") : nothing}
${olderUrl ? `<p><a rel="next" href="${escapeHtml(olderUrl)}">Older requests</a></p>` : ""}
</main>${localTimesScript}`,
  });
}
