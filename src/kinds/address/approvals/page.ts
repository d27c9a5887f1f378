/**
 * The decision page: what is asked (its description as safely rendered Markdown), a comment box
 * when the request takes one, and a button per option; once decided, what was decided, by whom
 * and when, in words (never an internal label such as the owner link's `owner-link`). Plain HTML,
 * labelled, keyboard-usable, phone width; the only script shows times in the reader's time zone.
 */
import { escapeHtml, htmlDocument } from "../../../site/layout";
import { safeMarkdown } from "../../../site/markdown";
import { NONCE_SLOT } from "../../../kind/public-answer";
import { localTimesScript, timeHtml } from "../../../site/times";
import { OWNER_LINK } from "./store";
import { MAX_COMMENT_CHARS, type ApprovalsConfig, type DecisionPayload } from "./schema";

const STYLE = `
main { max-width: 40rem; margin: 2.5rem auto; padding: 0 1.25rem 2rem; }
.description { border-left: 4px solid var(--line); padding-left: 1rem; margin: 1rem 0; }
form { display: grid; gap: 1rem; margin-top: 1.25rem; }
label { font-weight: 600; }
textarea { font: inherit; padding: .6rem .7rem; border: 1px solid var(--line); border-radius: 6px;
  background: var(--panel); color: var(--fg); width: 100%; min-height: 6rem; }
.buttons { display: flex; flex-wrap: wrap; gap: .75rem; }
button { font: inherit; font-weight: 600; padding: .65rem 1.2rem; border: 2px solid var(--accent); border-radius: 6px;
  background: var(--accent); color: #fff; cursor: pointer; }
button.denies { background: transparent; color: var(--fg); }
textarea:focus-visible, button:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.muted { color: var(--muted); }
.decided { border: 2px solid var(--line); border-radius: 8px; padding: .75rem 1rem; }
`;

function approvalsPage(title: string, body: string): string {
  return htmlDocument({
    title,
    description: title,
    noindex: true,
    styleNonce: NONCE_SLOT,
    head: `<style nonce="${NONCE_SLOT}">${STYLE}</style>`,
    body: `<main id="main">${body}</main>${localTimesScript}`,
  });
}

function asked(config: ApprovalsConfig): string {
  return (
    `<h1>${escapeHtml(config.title)}</h1>` +
    `${config.description ? `<div class="description">${safeMarkdown(config.description)}</div>` : ""}`
  );
}

export function decisionForm(
  config: ApprovalsConfig,
  approver: string,
  decideBy: string,
  error: string | null = null,
): string {
  const required = config.comment === "required";
  const comment =
    config.comment === "none"
      ? ""
      : `<div><label for="comment">Comment${required ? " (required)" : " (optional)"}</label>
<textarea id="comment" name="comment" maxlength="${MAX_COMMENT_CHARS}"${required ? " required" : ""}></textarea></div>`;
  const asker = approver === OWNER_LINK ? "Anyone with this link can decide" : `Asked of ${escapeHtml(approver)}`;
  const buttons = config.options
    .map((o) => {
      const cls = o.outcome === "denied" ? "denies" : "approves";
      return `<button type="submit" name="option" value="${o.id}" class="${cls}">${escapeHtml(o.label)}</button>`;
    })
    .join("");
  return approvalsPage(
    config.title,
    `${asked(config)}
<p class="muted">${asker}; decide by ${timeHtml(decideBy)}.</p>
${error ? `<p role="alert">${escapeHtml(error)}</p>` : ""}
<form method="post">
${comment}
<div class="buttons">${buttons}</div>
</form>`,
  );
}

export function decidedPage(config: ApprovalsConfig, d: DecisionPayload, already: boolean): string {
  const label = config.options.find((o) => o.id === d.option)?.label;
  const by = d.decided_by === OWNER_LINK ? ", through the request's own link" : ` by ${escapeHtml(d.decided_by)}`;
  const what =
    d.state === "expired"
      ? `Expired without a decision${label ? ` (counted as “${escapeHtml(label)}”)` : ""}`
      : `${escapeHtml(label ?? d.state)}${by}`;
  return approvalsPage(
    config.title,
    `${asked(config)}
<div class="decided" role="status" id="decision">\
<p><strong>${already ? "Already decided: " : "Decided: "}${what}</strong></p>
<p class="muted">At ${timeHtml(d.decided_at)}.</p>
${d.comment ? `<p>Comment: ${escapeHtml(d.comment)}</p>` : ""}</div>`,
  );
}
