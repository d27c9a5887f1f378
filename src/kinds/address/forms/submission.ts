/**
 * Reading a submission: the page posts `application/x-www-form-urlencoded`, scripts post JSON.
 * Each configured field is checked by its type (one line of text, an e-mail address, a number in
 * range, one of a select's options, a checkbox); a field the form does not have is refused, as
 * bad input always is. The honeypot is read apart: filled, the post is spam.
 */
import { AppError } from "../../../http/errors";
import { DEFAULT_MAX_LENGTH, HONEYPOT, type FormField } from "./schema";

export type Value = string | number | boolean | null;
export interface FieldError {
  path: string;
  message: string;
}

export interface Posted {
  /** The raw values, as the page shows them back after an error. */
  raw: Record<string, string>;
  spam: boolean;
  json: boolean;
}

/** The body as name → text: a 400 when it is not a form post or a JSON object of scalars, 415 for another type. */
export function readPosted(body: Uint8Array | null, contentType: string): Posted {
  const unreadable = (detail: string) => new AppError("invalid_request", detail);
  const text = body ? new TextDecoder().decode(body) : "";
  const raw: Record<string, string> = {};
  if (/^application\/json\b/i.test(contentType)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw unreadable("The body is not JSON.");
    }
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed))
      throw unreadable("Send a JSON object of field values.");
    for (const [k, v] of Object.entries(parsed)) {
      if (v === null || v === undefined) continue;
      if (typeof v === "object") throw unreadable(`${k}: a field's value is text, a number or true/false.`);
      raw[k] = typeof v === "boolean" ? (v ? "on" : "") : String(v);
    }
    return { raw, spam: (raw[HONEYPOT] ?? "") !== "", json: true };
  }
  if (/^application\/x-www-form-urlencoded\b/i.test(contentType) || contentType === "") {
    for (const [k, v] of new URLSearchParams(text)) {
      if (k in raw) throw unreadable(`${k}: given twice.`);
      raw[k] = v;
    }
    return { raw, spam: (raw[HONEYPOT] ?? "") !== "", json: false };
  }
  throw new AppError("unsupported_media_type", "Post the form (application/x-www-form-urlencoded) or JSON.");
}

/** Text a person typed: one line (text fields) or several (a textarea); never other control characters. */
const TEXT = { line: /^[^\u0000-\u001f\u007f]*$/, lines: /^[^\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]*$/ };
const EMAIL = /^[^\s@<>()[\],;:"]+@[^\s@<>()[\],;:"]+\.[^\s@<>()[\],;:"]+$/;

function valueOf(f: FormField, given: string | undefined): { value: Value } | { error: string } {
  const empty = given === undefined || given.trim() === "";
  if (f.type === "checkbox") {
    const on = !empty && given !== "false" && given !== "0";
    if (f.required && !on) return { error: "must be checked" };
    return { value: on };
  }
  if (empty) return f.required ? { error: "is required" } : { value: null };
  const v = f.type === "textarea" ? given!.replace(/\r\n/g, "\n") : given!.trim();
  if (f.type === "number") {
    const n = Number(v);
    if (!Number.isFinite(n)) return { error: "must be a number" };
    if (f.min !== null && n < f.min) return { error: `must be at least ${f.min}` };
    if (f.max !== null && n > f.max) return { error: `must be at most ${f.max}` };
    return { value: n };
  }
  if (f.type === "select") return f.options!.includes(v) ? { value: v } : { error: "must be one of the choices" };
  const max = f.max_length ?? DEFAULT_MAX_LENGTH[f.type]!;
  if ([...v].length > max) return { error: `must be at most ${max} characters` };
  if (!(f.type === "textarea" ? TEXT.lines : TEXT.line).test(v))
    return {
      error:
        f.type === "textarea"
          ? "must be text without control characters"
          : "must be one line of text without control characters",
    };
  if (f.type === "email" && !EMAIL.test(v)) return { error: "must be an e-mail address" };
  return { value: v };
}

/** The submission's values by field, or what is wrong with it, field by field. */
export function checkSubmission(
  fields: FormField[],
  raw: Record<string, string>,
): { data: Record<string, Value> } | { errors: FieldError[] } {
  const errors: FieldError[] = [];
  const data: Record<string, Value> = {};
  const known = new Set([...fields.map((f) => f.name), HONEYPOT]);
  for (const k of Object.keys(raw)) if (!known.has(k)) errors.push({ path: k, message: "is not a field of this form" });
  for (const f of fields) {
    const out = valueOf(f, raw[f.name]);
    if ("error" in out) errors.push({ path: f.name, message: out.error });
    else data[f.name] = out.value;
  }
  return errors.length ? { errors } : { data };
}
