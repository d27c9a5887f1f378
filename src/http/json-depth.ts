/**
 * JSON a caller sends nests at most MAX_JSON_DEPTH levels below each field, checked before
 * the validators or any engine walk it: a 50 KB body of 5,000 nested arrays would otherwise
 * exhaust the stack wherever it is first serialised or compared (a 500, after charging).
 * /v1 bodies are checked by body-limits.ts; kinds parsing a public body use parseCallerJson.
 */
import { AppError } from "./errors";
import { deeperThan, MAX_JSON_DEPTH } from "../json";

/** 422 naming the field (the body's top-level member) whose value nests too deeply. */
export function tooDeep(path: (string | number)[], prefix = ""): AppError {
  const field = [prefix, path.length ? String(path[0]) : ""].filter(Boolean).join(".") || "body";
  const message = `is nested deeper than ${MAX_JSON_DEPTH} levels`;
  return new AppError("validation_failed", `${field}: ${message}.`, { errors: [{ path: field, message }] });
}

/** Parses a JSON text a caller sent (400 when it does not parse, 422 when it nests too deeply). */
export function parseCallerJson(text: string, field: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new AppError("invalid_request", "The body is sent as JSON but does not parse.");
  }
  const deep = deeperThan(value, MAX_JSON_DEPTH);
  if (deep) throw tooDeep([], field);
  return value;
}
