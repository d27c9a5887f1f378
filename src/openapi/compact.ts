/**
 * Keeps the OpenAPI document small enough for an agent or a generator to read.
 * The generator writes every error response out in full under every operation
 * (three quarters of the document, at 19 kinds); here each distinct error
 * response, any other response and each parameter used by several operations,
 * moves to `components` once and is referred to by `$ref`, a parameter's
 * description is written once (not again in its schema), and the security most
 * operations share becomes the document's default.
 */
import { ERROR_CODES } from "../http/errors";
import { pruneComponents } from "./refs";

type Json = Record<string, any>;
type Document = Json & { paths?: Record<string, Json>; components?: Json };

const METHODS = ["get", "put", "post", "delete", "patch", "head", "options"];

function* operations(doc: Document): Generator<Json> {
  for (const item of Object.values(doc.paths ?? {})) for (const m of METHODS) if (item[m]) yield item[m];
  for (const item of Object.values<Json>(doc.webhooks ?? {})) for (const m of METHODS) if (item[m]) yield item[m];
}

/** `not found` → `NotFound`: component names allow letters, digits, `.`, `-` and `_` only. */
const pascal = (text: string) => text.replace(/(^|[^A-Za-z0-9]+)([A-Za-z0-9])/g, (_, _sep, ch: string) => ch.toUpperCase()).replace(/[^A-Za-z0-9]/g, "");

/**
 * The name a shared response gets: an error's status title (`Unauthorized`), a success's schema
 * (`CreatedResource`) or status, then a counter for variants.
 */
function responseName(status: string, response: Json): string {
  if (status === "default") return "Error";
  if (/^[123]/.test(status)) {
    const ref = Object.values<Json>(response.content ?? {})[0]?.schema?.$ref as string | undefined;
    return ref ? `${ref.split("/").pop()}Response` : `Status${status}`;
  }
  const entry = Object.values(ERROR_CODES).find(([s]) => String(s) === status);
  return entry ? pascal(entry[1]) : `Status${status}`;
}

/** Puts `value` under components[section] (reusing an equal one already there) and answers its $ref. */
function hoist(doc: Document, section: string, base: string, value: Json, seen: Map<string, string>): Json {
  const key = JSON.stringify(value);
  let name = seen.get(key);
  if (!name) {
    const taken = ((doc.components ??= {})[section] ??= {}) as Json;
    name = base;
    for (let n = 2; taken[name] !== undefined; n++) name = `${base}${n}`;
    taken[name] = value;
    seen.set(key, name);
  }
  return { $ref: `#/components/${section}/${name}` };
}

/**
 * Statuses nearly every operation may answer, folded into the operation's `default` response (an
 * operation lists on its own only the statuses that say something about it): one reference per
 * operation rather than one per status, which is most of what keeps the document small.
 */
const FOLDED: Record<string, { statuses: string[]; description: string }> = {
  default: {
    statuses: ["400", "401", "403", "404", "410", "429", "500"],
    description:
      "The errors any operation may answer, as problem+json (those particular to this operation are listed on their own): " +
      "`invalid_request` (400: malformed JSON, a bad header), `unauthorized` (401: a missing, malformed or unknown credential), " +
      "`forbidden` (403), `not_found` (404), `resource_expired` or `resource_cancelled` (410: with the final record, for 30 days), " +
      "`rate_limited` (429, with Retry-After), `internal_error` (500: logged with the request id, never charged), " +
      "`service_misconfigured` (503: a setting for the operator to fix).",
  },
};

/** Every header any folded status documents, anywhere: one folded response for all operations, not a variant per set of statuses. */
function foldedHeaders(doc: Document): Record<string, Json> {
  const headers: Record<string, Json> = {};
  for (const op of operations(doc)) for (const { statuses } of Object.values(FOLDED)) for (const s of statuses) Object.assign(headers, op.responses?.[s]?.headers ?? {});
  return headers;
}

function fold(op: Json, headers: Record<string, Json>): void {
  for (const [range, { statuses, description }] of Object.entries(FOLDED)) {
    const present = statuses.filter((s) => op.responses?.[s]);
    if (!present.length) continue;
    op.responses[range] = { ...op.responses[present[0]!], description, headers };
    for (const s of present) delete op.responses[s];
  }
}

/**
 * A parameter as written once: its description not again in its schema, and `required: false`
 * (the default) not at all.
 */
function describedOnce(p: Json): Json {
  if (p.$ref) return p;
  const { required, ...rest } = p;
  const out = required === false ? rest : p;
  if (!out.schema?.description || out.schema.description !== out.description) return out;
  const { description: _, ...schema } = out.schema;
  return { ...out, schema };
}

export function compact(doc: Document): Document {
  const responses = new Map<string, string>();
  const responseCount = new Map<string, number>();
  const paramCount = new Map<string, number>();
  const headers = foldedHeaders(doc);
  for (const op of operations(doc)) {
    if (op.parameters) op.parameters = op.parameters.map(describedOnce);
    fold(op, headers);
    for (const response of Object.values<Json>(op.responses ?? {})) responseCount.set(JSON.stringify(response), (responseCount.get(JSON.stringify(response)) ?? 0) + 1);
  }
  for (const op of operations(doc)) for (const p of op.parameters ?? []) if (!p.$ref) paramCount.set(JSON.stringify(p), (paramCount.get(JSON.stringify(p)) ?? 0) + 1);
  const params = new Map<string, string>();
  const security = new Map<string, number>();

  for (const op of operations(doc)) {
    for (const [status, response] of Object.entries<Json>(op.responses ?? {})) {
      const shared = /^[45]|^default$/.test(status) || (responseCount.get(JSON.stringify(response)) ?? 0) > 1;
      if (!response.$ref && shared) op.responses[status] = hoist(doc, "responses", responseName(status, response), response, responses);
    }
    op.parameters = op.parameters?.map((p: Json) =>
      !p.$ref && (paramCount.get(JSON.stringify(p)) ?? 0) > 1 ? hoist(doc, "parameters", pascal(`${p.name} ${p.in === "path" ? "" : p.in}`), p, params) : p,
    );
    if (op.security) security.set(JSON.stringify(op.security), (security.get(JSON.stringify(op.security)) ?? 0) + 1);
  }

  // The most common security requirement is the default; operations that have it say nothing, and one
  // that said nothing (no credential) says so now, or it would inherit the default.
  const [common] = [...security.entries()].sort((a, b) => b[1] - a[1])[0] ?? [];
  if (common) {
    doc.security = JSON.parse(common);
    for (const op of operations(doc)) {
      if (!op.security) op.security = [];
      else if (JSON.stringify(op.security) === common) delete op.security;
    }
  }
  return doc;
}

/** Keys whose values are data, not schemas: a `description` inside an example is the example's. */
const DATA_KEYS = new Set(["example", "examples", "default", "enum", "const"]);

const isEmpty = (v: unknown) => !!v && typeof v === "object" && !Array.isArray(v) && Object.keys(v).length === 0;

function withoutDescriptions(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutDescriptions);
  if (!node || typeof node !== "object") return node;
  const out: Json = Object.fromEntries(
    Object.entries(node)
      .filter(([k, v]) => !(k === "description" && typeof v === "string"))
      .map(([k, v]) => [k, DATA_KEYS.has(k) ? v : withoutDescriptions(v)]),
  );
  // A described `$ref` is `allOf: [ref, { description }]`: without its description, the ref alone.
  if (Array.isArray(out.allOf) && out.allOf.some(isEmpty)) {
    const rest = (out.allOf as unknown[]).filter((s) => !isEmpty(s));
    if (rest.length === 1 && Object.keys(out).length === 1) return rest[0];
    out.allOf = rest;
  }
  return out;
}

/** A schema's own and its fields' descriptions dropped (a `$ref` stays as it is). */
const bare = (holder: Json | undefined, key: string) => {
  if (holder?.[key]) holder[key] = withoutDescriptions(holder[key]);
};

function bareContent(entry: Json | undefined): void {
  for (const media of Object.values<Json>(entry?.content ?? {})) bare(media, "schema");
}

/**
 * Statuses the whole document leaves to each operation's `default` response: any operation that takes
 * a body or an Idempotency-Key may answer them, so they say little about the one operation. Slices
 * list them where they apply.
 */
const OUTLINE_FOLDED: Record<string, string> = {
  "409": "`conflict` or `idempotency_in_flight` (409: the state the operation needs does not hold, or the same Idempotency-Key is still running)",
  "413": "`payload_too_large` (413: a body over the operation's limit)",
  "415": "`unsupported_media_type` (415: a body that is not the media type the operation takes)",
};

/**
 * The whole document as served without a slice: an index of every path, operation, parameter,
 * request schema and example, response status and event, small enough to read whole as kinds are
 * added. It leaves out what grows with every kind and matters only once a kind is chosen: the
 * operations' long descriptions (their summaries stay) and the fields', the success responses' body
 * schemas, and the 409/413/415 every body-taking operation shares (said once, in `default`). Slices
 * (`?kinds=…`, `?kinds=all` for every kind) keep all of it.
 */
export function outline(full: Document): Document {
  const doc = structuredClone(full);
  for (const op of operations(doc)) {
    delete op.description;
    bareContent(op.requestBody);
    for (const [status, response] of Object.entries<Json>(op.responses ?? {})) {
      if (status in OUTLINE_FOLDED) delete op.responses[status];
      else if (/^2/.test(status) && !response.$ref) for (const media of Object.values<Json>(response.content ?? {})) delete media.schema;
      else bareContent(response);
    }
    for (const p of op.parameters ?? []) bare(p, "schema");
  }
  const components = doc.components ?? {};
  for (const [name, response] of Object.entries<Json>(components.responses ?? {})) {
    if (name === "Error") response.description += ` Also ${Object.values(OUTLINE_FOLDED).join("; ")}.`;
    for (const media of Object.values<Json>(response.content ?? {})) {
      if (media.schema?.$ref !== "#/components/schemas/Problem" && media.schema?.$ref !== "#/components/schemas/PaymentRequired") delete media.schema;
    }
  }
  pruneComponents(doc);
  for (const name of Object.keys(components.schemas ?? {})) bare(components.schemas, name);
  for (const response of Object.values<Json>(components.responses ?? {})) bareContent(response);
  for (const p of Object.values<Json>(components.parameters ?? {})) bare(p, "schema");
  return doc;
}
