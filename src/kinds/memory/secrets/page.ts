/**
 * The pages a person sees at a secret's link (public.ts decides which). Plain HTML with one
 * form, readable without script; the only script is the copy button's, inline with the
 * response's nonce (kind/public-answer.ts), so the page's policy allows nothing else.
 */
import { escapeHtml, htmlDocument } from "../../../site/layout";
import { NONCE_SLOT } from "../../../kind/public-answer";

const STYLE = `
main { max-width: 36rem; margin: 3rem auto; padding: 0 1.25rem; }
form, .value { margin-top: 1.25rem; display: grid; gap: .75rem; }
label { font-weight: 600; }
input, textarea { font: inherit; padding: .6rem .7rem; border: 1px solid var(--line); border-radius: 6px;
  background: var(--panel); color: var(--fg); width: 100%; }
textarea { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; min-height: 8rem; resize: vertical; }
button { font: inherit; font-weight: 600; padding: .6rem 1rem; border: 0; border-radius: 6px;
  background: var(--accent); color: #fff; cursor: pointer; justify-self: start; }
.notice { padding: .6rem .8rem; border-radius: 6px; border: 1px solid var(--line); background: var(--panel); }
.error { border-color: #cf222e; }
`;

function secretPage(title: string, body: string, script = ""): string {
  return htmlDocument({
    title,
    description: "A one-time secret.",
    noindex: true,
    styleNonce: NONCE_SLOT,
    head: `<style nonce="${NONCE_SLOT}">${STYLE}</style>`,
    body: `<main id="main">${body}</main>${script ? `<script nonce="${NONCE_SLOT}">${script}</script>` : ""}`,
  });
}

/** A secret is waiting: nothing is used up by looking. */
export function waitingPage(passphraseRequired: boolean, message: string | null): string {
  const field = passphraseRequired
    ? `<label for="passphrase">Passphrase</label><input id="passphrase" name="passphrase" type="password" ` +
      `autocomplete="off" required autofocus>`
    : "";
  return secretPage(
    "A secret is waiting",
    `<h1>A secret is waiting for you</h1>
<p>It can be revealed once. After that it is destroyed and this link shows nothing.</p>
${message ? `<p class="notice error" role="alert">${escapeHtml(message)}</p>` : ""}
<form method="post">${field}<button type="submit">Reveal the secret</button></form>`,
  );
}

/** The value, this once. */
export function revealedPage(value: string): string {
  return secretPage(
    "Your secret",
    `<h1>Your secret</h1>
<p class="notice">This is the only time it is shown: it has been destroyed. Copy it now.</p>
<div class="value"><label for="secret">Secret</label><textarea id="secret" readonly>${escapeHtml(value)}</textarea>
<button id="copy" type="button">Copy</button></div>`,
    `document.getElementById("copy").addEventListener("click", async (e) => {
  const text = document.getElementById("secret").value;
  try { await navigator.clipboard.writeText(text); e.target.textContent = "Copied"; }
  catch { document.getElementById("secret").select(); e.target.textContent = "Press Ctrl+C to copy"; }
});`,
  );
}

/** Revealed already, destroyed, or never there: the same page, so it tells a stranger nothing. */
export function nothingHerePage(message: string | null): string {
  return secretPage(
    "Nothing is here",
    `<h1>Nothing is here</h1>
${message ? `<p class="notice error" role="alert">${escapeHtml(message)}</p>` : ""}
<p>This secret was revealed or destroyed already, or the link is wrong. A secret can be read only once.</p>`,
  );
}
