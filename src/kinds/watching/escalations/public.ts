/**
 * The ack page of an incident (`/ack/{key}`, the link each step carries): GET shows what is
 * happening and a button, POST acknowledges (a form post with an optional name, or JSON from a
 * script). Opening the link changes nothing, so a chat's link preview never acknowledges. Plain
 * HTML, phone width; the only script shows times in the reader's time zone. Who acknowledged or
 * resolved is said in words, never as the labels the API records (`api`, `ack page`, a watch's id).
 */
import { AppError } from "../../../http/errors";
import { escapeHtml, htmlDocument } from "../../../site/layout";
import { NONCE_SLOT } from "../../../kind/public-answer";
import { localTimesScript, timeHtml } from "../../../site/times";
import { definePublicFace, type PublicAnswer, type PublicRequest } from "../../../kind/public-face";
import { postedFields, prefersHtml } from "../../../kind/public-request";
import { byAckKey, type IncidentRow } from "./incidents";
import { acknowledge } from "./store";
import type { EscalationConfig } from "./schema";

const STYLE = `
main { max-width: 40rem; margin: 2.5rem auto; padding: 0 1.25rem 2rem; }
form { display: grid; gap: 1rem; margin-top: 1.25rem; }
label { font-weight: 600; }
input { font: inherit; padding: .6rem .7rem; border: 1px solid var(--line); border-radius: 6px;
  background: var(--panel); color: var(--fg); }
button { font: inherit; font-weight: 600; padding: .65rem 1.2rem; border: 2px solid var(--accent); border-radius: 6px;
  background: var(--accent); color: #fff; cursor: pointer; justify-self: start; }
input:focus-visible, button:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.muted { color: var(--muted); }
.details { white-space: pre-wrap; border-left: 4px solid var(--line); padding-left: 1rem; }
`;

/** Recorded when the page's form is sent without a name. */
const ACK_PAGE = "ack page";

/** Who did it, in words: a name as given; the labels the API records for its own ways in, said for people. */
function byWhom(by: string | null, row: IncidentRow): string {
  if (by === null) return "";
  if (by === ACK_PAGE) return " on this page";
  if (by === "api") return " through the API";
  // The watch or group that raised it resolves it when it recovers: its id is its label, not a person's.
  if (by === row.source && /^r_/.test(by)) return " automatically, as what raised it recovered";
  return ` by ${escapeHtml(by)}`;
}

function incidentPage(row: IncidentRow): string {
  const details = row.details ? `<p class="details">${escapeHtml(row.details)}</p>` : "";
  const head = `<h1>${escapeHtml(row.title)}</h1>${details}
<p class="muted">Opened ${timeHtml(row.opened_at)}; ${row.steps_sent} escalation step(s) sent.</p>`;
  const body =
    row.state === "open"
      ? `<form method="post"><div><label for="by">Your name (optional)</label><br>\
<input id="by" name="by" maxlength="100" autocomplete="name"></div>
<button type="submit">Acknowledge</button></form>`
      : row.state === "acknowledged"
        ? `<p role="status"><strong>Acknowledged</strong>${byWhom(row.acked_by, row)} at ` +
          `${timeHtml(row.acked_at!)}. No further steps will be sent.</p>`
        : `<p role="status"><strong>Resolved</strong>${byWhom(row.resolved_by, row)} at ` +
          `${timeHtml(row.resolved_at!)}.</p>`;
  return htmlDocument({
    title: row.title,
    description: row.title,
    noindex: true,
    styleNonce: NONCE_SLOT,
    head: `<style nonce="${NONCE_SLOT}">${STYLE}</style>`,
    body: `<main id="main">${head}${body}</main>${localTimesScript}`,
  });
}

/** Who acknowledges: the form's `by` (or JSON's), one line; ACK_PAGE when left empty. */
function who(request: PublicRequest): string {
  const by = postedFields(request).by;
  if (typeof by !== "string" || by.trim() === "") return ACK_PAGE;
  const name = by.trim();
  if ([...name].length > 100 || /[\u0000-\u001f\u007f-\u009f]/.test(name))
    throw new AppError("validation_failed", "by: one line of at most 100 characters.");
  return name;
}

export const ackFace = definePublicFace<EscalationConfig>({
  routes: [
    {
      name: "page",
      path: "/ack/{key}",
      methods: ["GET"],
      maxBodyBytes: 0,
      answers: ["html", "json"],
      summary: "An incident's ack page: what happened and an Acknowledge button.",
    },
    {
      name: "ack",
      path: "/ack/{key}",
      methods: ["POST"],
      maxBodyBytes: 4096,
      answers: ["html", "json"],
      summary: "Acknowledge (a form post with an optional `by`, or JSON): no further steps are sent.",
    },
  ],
  handle(store, _config, request): PublicAnswer {
    const row = byAckKey(store.sql, request.params.key ?? "");
    if (!row) throw new AppError("not_found", "No incident has this link.");
    const html = prefersHtml(request) || (request.method === "GET" && !/json/i.test(request.headers.accept ?? ""));
    const current =
      request.method === "POST" ? (acknowledge(store, row, who(request)), byAckKey(store.sql, row.ack_key)!) : row;
    if (html) return { type: "html", body: incidentPage(current) };
    return {
      type: "json",
      body: { incident_id: current.id, title: current.title, state: current.state, acknowledged_by: current.acked_by },
    };
  },
});
