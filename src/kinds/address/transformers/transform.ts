/**
 * Running a transformer's expressions on one request: the body to send (null: send nothing) and
 * the headers to add, or why it failed. The same function serves the public address and the
 * `test` operation, so a test shows exactly what a request would cause.
 */
import type { Json } from "../../../json";
import { utf8Length } from "../../../bytes";
import { evaluate } from "../../../expressions/jsonata";
import { CONNECTION_HEADERS, HEADER_NAME, isHeaderValue } from "../../../http/header-fields";
import { MAX_OUTPUT_BYTES, type Expressions } from "./schema";

export interface Bindings {
  headers: Record<string, string>;
  method: string;
  path: string;
  query: Record<string, string>;
}

export type Outcome = { ok: true; body: Json | null; headers: Record<string, string> } | { ok: false; error: string };

/** Headers an expression may not set: the connection's, and the signature the pipeline adds. */
const RESERVED = (name: string) => CONNECTION_HEADERS.test(name) || /^webhook-(id|timestamp|signature)$/i.test(name);

export async function transform(
  exprs: Pick<Expressions, "expression" | "headers_expression">,
  body: Json,
  bindings: Bindings,
): Promise<Outcome> {
  const bound = { headers: bindings.headers, method: bindings.method, path: bindings.path, query: bindings.query };
  const result = await evaluate(exprs.expression, body, bound);
  if (!result.ok) return { ok: false, error: `expression: ${result.error}` };
  if (result.value !== null && utf8Length(JSON.stringify(result.value)) > MAX_OUTPUT_BYTES) {
    return { ok: false, error: `expression: its result is larger than ${MAX_OUTPUT_BYTES} bytes as JSON` };
  }
  const headers: Record<string, string> = {};
  if (exprs.headers_expression) {
    const h = await evaluate(exprs.headers_expression, body, bound);
    if (!h.ok) return { ok: false, error: `headers_expression: ${h.error}` };
    if (h.value !== null) {
      if (typeof h.value !== "object" || Array.isArray(h.value))
        return { ok: false, error: "headers_expression: must yield an object of header names to strings" };
      for (const [name, value] of Object.entries(h.value)) {
        if (!HEADER_NAME.test(name) || RESERVED(name))
          return { ok: false, error: `headers_expression: ${JSON.stringify(name)} is not a header it may set` };
        if (typeof value !== "string" || !isHeaderValue(value) || value.length > 4096)
          return { ok: false, error: `headers_expression: the value of ${name} must be one line of text` };
        headers[name.toLowerCase()] = value;
      }
    }
  }
  return { ok: true, body: result.value, headers };
}
