/**
 * The form as a person sees it: plain HTML (no script), every input with its label, hints and
 * errors tied to it (aria-describedby), required fields marked in words as well as for assistive
 * technology, an error summary that links to each field, usable by keyboard and at phone width.
 * The honeypot sits off-screen, hidden from assistive technology and out of the tab order.
 */
import { escapeHtml, htmlDocument } from "../../../site/layout";
import { NONCE_SLOT } from "../../../kind/public-answer";
import { DEFAULT_MAX_LENGTH, HONEYPOT, type FormField, type FormsConfig } from "./schema";
import type { FieldError } from "./submission";

const STYLE = `
main { max-width: 38rem; margin: 2.5rem auto; padding: 0 1.25rem 2rem; }
form { margin-top: 1.25rem; display: grid; gap: 1.1rem; }
.field { display: grid; gap: .35rem; }
label { font-weight: 600; }
.req { color: var(--muted); font-weight: 400; }
.help { color: var(--muted); font-size: .92rem; margin: 0; }
.error { color: #b42318; font-weight: 600; margin: 0; }
@media (prefers-color-scheme: dark) { .error { color: #ff8a80; } }
input, textarea, select { font: inherit; padding: .6rem .7rem; border: 1px solid var(--line); border-radius: 6px;
  background: var(--panel); color: var(--fg); width: 100%; }
input[aria-invalid="true"], textarea[aria-invalid="true"], select[aria-invalid="true"] { border-color: #b42318; }
textarea { min-height: 8rem; resize: vertical; }
.check { display: flex; gap: .6rem; align-items: flex-start; }
.check input { width: auto; margin-top: .35rem; }
input:focus-visible, textarea:focus-visible, select:focus-visible,
button:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
button { font: inherit; font-weight: 600; padding: .65rem 1.1rem; border: 0; border-radius: 6px;
  background: var(--accent); color: #fff; cursor: pointer; justify-self: start; }
.summary { border: 2px solid #b42318; border-radius: 8px; padding: .75rem 1rem; }
.summary h2 { margin: 0 0 .25rem; }
.description { white-space: pre-line; }
.hp { position: absolute; left: -10000px; top: auto; width: 1px; height: 1px; overflow: hidden; }
`;

function formsPage(title: string, body: string): string {
  return htmlDocument({
    title,
    description: title,
    noindex: true,
    styleNonce: NONCE_SLOT,
    head: `<style nonce="${NONCE_SLOT}">${STYLE}</style>`,
    body: `<main id="main">${body}</main>`,
  });
}

const id = (name: string) => `f-${name}`;

function control(f: FormField, value: string, error: string | undefined): string {
  const described = [f.help ? `${id(f.name)}-help` : null, error ? `${id(f.name)}-error` : null]
    .filter(Boolean)
    .join(" ");
  const common =
    `id="${id(f.name)}" name="${f.name}"${f.required ? " required" : ""}` +
    `${described ? ` aria-describedby="${described}"` : ""}${error ? ' aria-invalid="true"' : ""}`;
  const max = f.max_length ?? DEFAULT_MAX_LENGTH[f.type];
  switch (f.type) {
    case "textarea":
      return `<textarea ${common} maxlength="${max}">${escapeHtml(value)}</textarea>`;
    case "select":
      return (
        `<select ${common}><option value="">Choose…</option>` +
        `${f.options!.map((o) => `<option${o === value ? " selected" : ""}>${escapeHtml(o)}</option>`).join("")}` +
        `</select>`
      );
    case "checkbox":
      return `<input type="checkbox" ${common} value="on"${value ? " checked" : ""}>`;
    case "number":
      return (
        `<input type="number" ${common} step="any" inputmode="decimal"` +
        `${f.min !== null ? ` min="${f.min}"` : ""}${f.max !== null ? ` max="${f.max}"` : ""} value="` +
        `${escapeHtml(value)}">`
      );
    case "email":
      return `<input type="email" ${common} maxlength="${max}" autocomplete="email" value="${escapeHtml(value)}">`;
    default:
      return `<input type="text" ${common} maxlength="${max}" value="${escapeHtml(value)}">`;
  }
}

function fieldBlock(f: FormField, value: string, error: string | undefined): string {
  const label =
    `<label for="${id(f.name)}">${escapeHtml(f.label)}` +
    `${f.required ? ' <span class="req">(required)</span>' : ""}</label>`;
  const help = f.help ? `<p class="help" id="${id(f.name)}-help">${escapeHtml(f.help)}</p>` : "";
  const err = error ? `<p class="error" id="${id(f.name)}-error">${escapeHtml(f.label)} ${escapeHtml(error)}.</p>` : "";
  if (f.type === "checkbox")
    return `<div class="field"><div class="check">${control(f, value, error)}${label}</div>${help}${err}</div>`;
  return `<div class="field">${label}${help}${control(f, value, error)}${err}</div>`;
}

/** The form, empty, or again with what was sent and what is wrong with it. */
export function formPage(config: FormsConfig, values: Record<string, string> = {}, errors: FieldError[] = []): string {
  const byField = new Map(errors.map((e) => [e.path, e.message]));
  const items = errors
    .map((e) => {
      const f = config.fields.find((x) => x.name === e.path);
      const text = f
        ? `<a href="#${id(f.name)}">${escapeHtml(f.label)} ${escapeHtml(e.message)}</a>`
        : escapeHtml(`${e.path} ${e.message}`);
      return `<li>${text}</li>`;
    })
    .join("");
  const summary = errors.length
    ? `<div class="summary" role="alert" aria-labelledby="problems">` +
      `<h2 id="problems">Please correct ${errors.length === 1 ? "this" : `these ${errors.length}`}</h2>` +
      `<ul>${items}</ul></div>`
    : "";
  return formsPage(
    config.title,
    `<h1>${escapeHtml(config.title)}</h1>
${config.description ? `<p class="description">${escapeHtml(config.description)}</p>` : ""}
${summary}
<form method="post">
${config.fields.map((f) => fieldBlock(f, values[f.name] ?? "", byField.get(f.name))).join("\n")}
<div class="hp" aria-hidden="true"><label for="${id(HONEYPOT)}">Leave this empty</label>\
<input type="text" id="${id(HONEYPOT)}" name="${HONEYPOT}" tabindex="-1" autocomplete="off"></div>
<button type="submit">${escapeHtml(config.submit_label)}</button>
</form>`,
  );
}

export function thanksPage(config: FormsConfig): string {
  return formsPage(
    config.title,
    `<h1>${escapeHtml(config.title)}</h1>
<p role="status" id="thanks">${escapeHtml(config.thank_you)}</p>`,
  );
}

export function limitedPage(config: FormsConfig, retrySeconds: number): string {
  return formsPage(
    config.title,
    `<h1>${escapeHtml(config.title)}</h1>
<p role="alert">Too many submissions came from your network this hour. \
Please try again in ${Math.ceil(retrySeconds / 60)} minutes.</p>`,
  );
}
