/**
 * Keeps the OpenAPI document small enough for an agent or a generator to read.
 * The generator writes every error response out in full under every operation
 * (three quarters of the document, at 19 kinds); here each distinct error
 * response, any other response and each parameter used by several operations,
 * moves to `components` once and is referred to by `$ref`, a parameter's
 * description is written once (not again in its schema), and the security most
 * operations share becomes the document's default.
 */
import type {
  ContentObject,
  HeaderObject,
  OpenAPIObject as Document,
  OperationObject,
  ParameterObject,
  ReferenceObject,
  ResponseObject,
  SecurityRequirementObject,
} from "openapi3-ts/oas31";
import { ERROR_CODES } from "../http/error-codes";
import { pruneComponents } from "./refs";
import { isRef, operations } from "./walk";

type Response = ResponseObject | ReferenceObject;
type Parameter = ParameterObject | ReferenceObject;
type Headers = Record<string, HeaderObject | ReferenceObject>;

/** An operation's responses by status (the generator's type has them as `any`). */
const responsesOf = (op: OperationObject): [string, Response][] => Object.entries<Response>(op.responses ?? {});

/** `not found` → `NotFound`: component names allow letters, digits, `.`, `-` and `_` only. */
const pascal = (text: string) =>
  text
    .replace(/(^|[^A-Za-z0-9]+)([A-Za-z0-9])/g, (_, _sep, ch: string) => ch.toUpperCase())
    .replace(/[^A-Za-z0-9]/g, "");

/**
 * The name a shared response gets: an error's status title (`Unauthorized`), a success's schema
 * (`CreatedResource`) or status, then a counter for variants.
 */
function responseName(status: string, response: ResponseObject): string {
  if (status === "default") return "Error";
  if (/^[123]/.test(status)) {
    const ref = Object.values(response.content ?? {})[0]?.schema?.$ref;
    return ref ? `${ref.split("/").pop()}Response` : `Status${status}`;
  }
  const entry = Object.values(ERROR_CODES).find(([s]) => String(s) === status);
  return entry ? pascal(entry[1]) : `Status${status}`;
}

/** Puts `value` under components[section] (reusing an equal one already there) and answers its $ref. */
function hoist(
  doc: Document,
  section: "responses" | "parameters",
  base: string,
  value: ResponseObject | ParameterObject,
  seen: Map<string, string>,
): ReferenceObject {
  const key = JSON.stringify(value);
  let name = seen.get(key);
  if (!name) {
    const taken: Record<string, object> = ((doc.components ??= {})[section] ??= {});
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
      "The errors any operation may answer, as problem+json (those particular to this operation are listed " +
      "on their own): `invalid_request` (400: malformed JSON, a bad header), `unauthorized` (401: a " +
      "missing, malformed or unknown credential), `forbidden` (403), `not_found` (404), `resource_expired` " +
      "or `resource_cancelled` (410: with the final record, for 30 days), `rate_limited` (429, with " +
      "Retry-After), `internal_error` (500: logged with the request id, never charged), " +
      "`service_misconfigured` (503: a setting for the operator to fix).",
  },
};

/**
 * Every header any folded status documents, anywhere: one folded response for all operations, not a variant per set of
 * statuses.
 */
function foldedHeaders(doc: Document): Headers {
  const headers: Headers = {};
  for (const op of operations(doc)) {
    for (const { statuses } of Object.values(FOLDED)) {
      for (const s of statuses) {
        const response = op.responses?.[s] as Response | undefined;
        if (response && !isRef(response)) Object.assign(headers, response.headers ?? {});
      }
    }
  }
  return headers;
}

function fold(op: OperationObject, headers: Headers): void {
  const responses = op.responses;
  if (!responses) return;
  for (const [range, { statuses, description }] of Object.entries(FOLDED)) {
    const present = statuses.filter((s) => responses[s]);
    if (!present.length) continue;
    responses[range] = { ...(responses[present[0]!] as Response), description, headers };
    for (const s of present) delete responses[s];
  }
}

/**
 * A parameter as written once: its description not again in its schema, and `required: false`
 * (the default) not at all.
 */
function describedOnce(p: Parameter): Parameter {
  if (isRef(p)) return p;
  const { required, ...rest } = p;
  const out: ParameterObject = required === false ? rest : p;
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
    for (const [, response] of responsesOf(op))
      responseCount.set(JSON.stringify(response), (responseCount.get(JSON.stringify(response)) ?? 0) + 1);
  }
  for (const op of operations(doc))
    for (const p of op.parameters ?? [])
      if (!isRef(p)) paramCount.set(JSON.stringify(p), (paramCount.get(JSON.stringify(p)) ?? 0) + 1);
  const params = new Map<string, string>();
  const security = new Map<string, number>();

  for (const op of operations(doc)) {
    for (const [status, response] of responsesOf(op)) {
      const shared = /^[45]|^default$/.test(status) || (responseCount.get(JSON.stringify(response)) ?? 0) > 1;
      if (!isRef(response) && shared)
        op.responses![status] = hoist(doc, "responses", responseName(status, response), response, responses);
    }
    op.parameters = op.parameters?.map((p) =>
      !isRef(p) && (paramCount.get(JSON.stringify(p)) ?? 0) > 1
        ? hoist(doc, "parameters", pascal(`${p.name} ${p.in === "path" ? "" : p.in}`), p, params)
        : p,
    );
    if (op.security) security.set(JSON.stringify(op.security), (security.get(JSON.stringify(op.security)) ?? 0) + 1);
  }

  // The most common security requirement is the default; operations that have it say nothing, and one
  // that said nothing (no credential) says so now, or it would inherit the default.
  const [common] = [...security.entries()].sort((a, b) => b[1] - a[1])[0] ?? [];
  if (common) {
    doc.security = JSON.parse(common) as SecurityRequirementObject[];
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
  const out: Record<string, unknown> = Object.fromEntries(
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
function bare<T extends object, K extends keyof T>(holder: T | undefined, key: K): void {
  if (holder?.[key]) holder[key] = withoutDescriptions(holder[key]) as T[K];
}

function bareContent(entry: { content?: ContentObject } | ReferenceObject | undefined): void {
  if (entry && !isRef(entry)) for (const media of Object.values(entry.content ?? {})) bare(media, "schema");
}

/**
 * Statuses the whole document leaves to each operation's `default` response: any operation that takes
 * a body or an Idempotency-Key may answer them, so they say little about the one operation. Slices
 * list them where they apply.
 */
const OUTLINE_FOLDED: Record<string, string> = {
  "409":
    "`conflict` or `idempotency_in_flight` (409: the state the operation needs does not hold, or the same " +
    "Idempotency-Key is still running)",
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
    for (const [status, response] of responsesOf(op)) {
      if (status in OUTLINE_FOLDED) delete op.responses![status];
      else if (/^2/.test(status) && !isRef(response))
        for (const media of Object.values(response.content ?? {})) delete media.schema;
      else bareContent(response);
    }
    for (const p of op.parameters ?? []) if (!isRef(p)) bare(p, "schema");
  }
  const components = doc.components ?? {};
  for (const [name, response] of Object.entries(components.responses ?? {})) {
    if (isRef(response)) continue;
    if (name === "Error") response.description += ` Also ${Object.values(OUTLINE_FOLDED).join("; ")}.`;
    for (const media of Object.values(response.content ?? {})) {
      if (
        media.schema?.$ref !== "#/components/schemas/Problem" &&
        media.schema?.$ref !== "#/components/schemas/PaymentRequired"
      )
        delete media.schema;
    }
  }
  pruneComponents(doc);
  for (const name of Object.keys(components.schemas ?? {})) bare(components.schemas, name);
  for (const response of Object.values(components.responses ?? {})) bareContent(response);
  for (const p of Object.values(components.parameters ?? {})) if (!isRef(p)) bare(p, "schema");
  return doc;
}
