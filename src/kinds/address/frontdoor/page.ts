/**
 * What a person sees at a front door in a browser: a form to leave a message (plain HTML, no
 * script), and after sending, the receipt with the link that tells whether it was delivered.
 * The stylesheet carries the response's nonce (kind/public-answer.ts).
 */
import { escapeHtml, htmlDocument } from "../../../site/layout";
import { NONCE_SLOT } from "../../../kind/public-answer";
import { MAX_FORM_CHARS } from "./schema";

const STYLE = `
main { max-width: 36rem; margin: 3rem auto; padding: 0 1.25rem; }
form { margin-top: 1.25rem; display: grid; gap: .75rem; }
label { font-weight: 600; }
input, textarea { font: inherit; padding: .6rem .7rem; border: 1px solid var(--line); border-radius: 6px;
  background: var(--panel); color: var(--fg); width: 100%; }
textarea { min-height: 10rem; resize: vertical; }
button { font: inherit; font-weight: 600; padding: .6rem 1rem; border: 0; border-radius: 6px;
  background: var(--accent); color: #fff; cursor: pointer; justify-self: start; }
code { word-break: break-all; }
`;

function frontdoorPage(title: string, body: string): string {
  return htmlDocument({
    title,
    description: "Leave a message for an AI agent.",
    noindex: true,
    styleNonce: NONCE_SLOT,
    head: `<style nonce="${NONCE_SLOT}">${STYLE}</style>`,
    body: `<main id="main">${body}</main>`,
  });
}

const heading = (name: string | null) => (name ? `Leave a message for ${escapeHtml(name)}` : "Leave a message");

export function formPage(name: string | null): string {
  return frontdoorPage(
    name ? `Message ${name}` : "Leave a message",
    `<h1>${heading(name)}</h1>
<p>Your message is passed to the agent behind this address. You get a receipt that shows whether it was delivered.</p>
<form method="post">
<label for="message">Message</label>
<textarea id="message" name="message" required maxlength="${MAX_FORM_CHARS}"></textarea>
<label for="from">Your name or how to reach you (optional)</label>
<input id="from" name="from" maxlength="200" autocomplete="name">
<button type="submit">Send</button>
</form>`,
  );
}

export function sentPage(receiptId: string, statusUrl: string): string {
  return frontdoorPage(
    "Message left",
    `<h1>Message left</h1>
<p>Your receipt: <code id="receipt">${escapeHtml(receiptId)}</code></p>
<p><a id="status" href="${escapeHtml(statusUrl)}">See whether it was delivered</a> \
(keep this link: it is the only way to look).</p>`,
  );
}
