/**
 * Shared schemas of the public API: the resource record, problems, x402 terms. Registered once as OpenAPI components.
 */
import { z } from "@hono/zod-openapi";
import { utf8Length } from "../bytes";
import type { Json } from "../json";

export const problem = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.int(),
    code: z.string().describe("Stable machine-readable error code."),
    detail: z.string(),
    request_id: z.string(),
    errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  })
  .openapi("Problem");

const requirement = z
  .object({
    scheme: z.literal("exact"),
    network: z.string(),
    maxAmountRequired: z.string().describe("Exact price of this call in USDC atomic units (µUSD)."),
    resource: z.string(),
    description: z.string(),
    mimeType: z.string(),
    payTo: z.string(),
    maxTimeoutSeconds: z.int(),
    asset: z.string(),
    extra: z.object({ name: z.string(), version: z.string() }).describe("EIP-712 domain of the asset."),
  })
  .openapi("PaymentRequirements");

export const paymentRequired = problem
  .extend({
    x402Version: z.literal(1),
    error: z.string(),
    accepts: z.array(requirement),
    price_usd: z.number(),
  })
  .openapi("PaymentRequired", {
    description:
      "x402 v1 terms plus the problem fields. The same terms, in v2 form, are in the base64 `PAYMENT-REQUIRED` header.",
  });

export const resourceRecord = z
  .object({
    id: z.string(),
    kind: z.string(),
    family: z.enum(["time", "address", "memory", "place", "watching", "utilities"]),
    state: z.enum(["active", "expired", "cancelled"]),
    label: z.string().nullable(),
    created_at: z.string(),
    expires_at: z.string(),
    charged_usd: z.number(),
    notify_url: z.string().nullable(),
    urls: z.object({ self: z.string(), public: z.string().nullable() }),
    config: z.record(z.string(), z.unknown()),
    usage: z.record(z.string(), z.unknown()),
    status: z.record(z.string(), z.unknown()).nullable(),
  })
  .openapi("ResourceRecord");

export const createdResource = resourceRecord
  .extend({
    management_token: z.string().describe("zvm_… — returned once; the only way to manage this resource."),
    signing_secret: z
      .string()
      .optional()
      .describe(
        "whsec_… — returned once when notify_url is set: verifies the Standard Webhooks signature of every event.",
      ),
    credential: z
      .record(z.string(), z.string())
      .optional()
      .describe(
        "Returned once by kinds whose public address takes a credential of its own (a proxy's): " +
          "`authorization` is the header value callers send.",
      ),
  })
  .openapi("CreatedResource");

/** A name or label: one line of text, without control characters. */
export const singleLine = (max: number) =>
  z
    .string()
    .max(max)
    .regex(/^[^\u0000-\u001f\u007f-\u009f]*$/, "must be one line of text without control characters");

/**
 * An http(s) URL the service calls or sends people to. Control characters are refused: a URL parser
 * would quietly percent-encode them, but one that reaches a header (a redirect's Location) would not.
 */
export const httpUrl = z
  .url({ protocol: /^https?$/ })
  .max(2048)
  .regex(/^[^\u0000-\u001f\u007f]*$/, "must not contain control characters")
  // Said in the schema too (zod's url check publishes nothing): a client building a body fills a URL, not any string.
  .meta({ format: "uri" });

/**
 * A field naming another of the caller's resources by its management token (zvm_…), which proves the
 * caller holds it. `x-management-token-of` lists the kinds it takes, so a client reading the schema
 * knows to create one of those first (the regex alone says only what a token looks like).
 */
export const managementTokenOf = (kinds: readonly string[], message: string) =>
  z
    .string()
    .regex(/^zvm_[0-9A-Za-z]+$/, message)
    .meta({ "x-management-token-of": [...kinds] });

/**
 * A document's text (a page, a Markdown body): lines and tabs, no other control characters, at most `maxBytes` in
 * UTF-8.
 */
export const multiLine = (maxBytes: number) =>
  z
    .string()
    .regex(
      /^[^\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]*$/,
      "must be text without control characters (tabs and line breaks are fine)",
    )
    .refine((text) => utf8Length(text) <= maxBytes, `must be at most ${maxBytes} bytes in UTF-8`);

/** Named, so every create schema refers to one definition rather than repeating it. */
const label = singleLine(200)
  .nullable()
  .default(null)
  .describe("Your name for the resource (one line, at most 200 characters).")
  .openapi("ResourceLabel");
const notifyUrl = httpUrl.nullable().default(null).describe("Receives lifecycle events.").openapi("NotifyUrl");

export const commonCreateFields = (defaultTtl: number, maxTtl: number) => ({
  ttl_seconds: z
    .int()
    .min(60)
    .max(maxTtl)
    .default(defaultTtl)
    .describe(`Lifetime in seconds (default ${defaultTtl}, at most ${maxTtl}).`),
  label,
  notify_url: notifyUrl,
});

export const resourceIdParam = z.object({
  id: z
    .string()
    .regex(/^r_[0-9A-Za-z]{22}$/)
    .openapi({ param: { name: "id", in: "path" }, example: "r_4k2R8h1Zq0Wm3n5T7v9x1y" }),
});

/** A time a caller gives (docs/api.md#requests-and-conventions: RFC 3339), with its offset (`Z` or `+02:00`). */
export const rfc3339 = z.iso.datetime({ offset: true });

/** Lists (docs/api.md#requests-and-conventions): `?limit=&cursor=` → `{ items, next_cursor }`. */
export const pageLimit = (fallback = 20) =>
  z.coerce
    .number()
    .int()
    .min(1)
    .max(100)
    .default(fallback)
    .openapi({ example: fallback })
    .describe(`Items per page (1–100, default ${fallback}).`);

/** The cursor of lists ordered by a sequence number: the last row's, as returned in next_cursor. */
export const seqCursor = z
  .string()
  .regex(/^\d{1,15}$/, "must be a next_cursor value from a previous page")
  .optional();

/**
 * The input of a rawBody operation: no query of its own (the route takes none), and what the route
 * fills in from Content-Type (checked to be a media type) and Content-Length (required).
 */
export const rawBodyInput = z.object({ content_type: z.string(), content_length: z.int().min(0) });
export type RawBodyInput = z.infer<typeof rawBodyInput>;

/** The input of an operation that takes no body or query. */
export const noInput = z.object({});

/** Any JSON value (an entry, a message, a stored result): zod checks nothing, the JSON parser already did. */
export const jsonValue = z.unknown().describe("Any JSON value.") as z.ZodType<Json>;

/** A page of a list (docs/api.md#requests-and-conventions): `{ items, next_cursor }`. */
export const pageOf = <T extends z.ZodType>(item: T) =>
  z.object({ items: z.array(item), next_cursor: z.string().nullable() });

/**
 * Cross-field rules that JSON Schema can state: each is the zod refinement that enforces it plus
 * the same rule as schema metadata, so the OpenAPI document and the MCP input schemas say it too
 * (a client generated from either gets the request right the first time). Routes that extend or
 * tighten a schema carry the metadata over (`withMetaOf`).
 */
type Fields = Record<string, unknown>;
const given = (v: Fields, fields: readonly string[]) => fields.filter((f) => v[f] !== undefined).length;

/** Exactly one of `fields` must be given. */
export function exactlyOneOf<T extends z.ZodObject>(schema: T, fields: readonly string[]): T {
  return schema
    .refine((v) => given(v as Fields, fields) === 1, {
      message: `give exactly one of ${fields.join(", ")}`,
      path: [fields[0]!],
    })
    .meta({ oneOf: fields.map((f) => ({ required: [f] })) }) as T;
}

/** At most one of `fields` may be given. */
export function atMostOneOf<T extends z.ZodObject>(schema: T, fields: readonly [string, string]): T {
  // The subschema names its properties too: a `required` with nothing defined beside it reads as a mistake to linters.
  const both = { properties: Object.fromEntries(fields.map((f) => [f, {}])), required: [...fields] };
  return schema
    .refine((v) => given(v as Fields, fields) <= 1, {
      message: `give ${fields.join(" or ")}, not both`,
      path: [fields[1]],
    })
    .meta({ not: both }) as T;
}

/** At least one of `fields` must be given. */
export function atLeastOneOf<T extends z.ZodObject>(schema: T, fields: readonly string[]): T {
  return schema
    .refine((v) => given(v as Fields, fields) >= 1, {
      message: `give ${fields.join(", ")} or several of them`,
      path: [fields[0]!],
    })
    .meta({ anyOf: fields.map((f) => ({ required: [f] })) }) as T;
}

/** `field` may only be given together with `needs`. */
export function onlyWith<T extends z.ZodObject>(schema: T, field: string, needs: string): T {
  return schema
    .refine((v) => (v as Fields)[field] === undefined || (v as Fields)[needs] !== undefined, {
      message: `only together with ${needs}`,
      path: [field],
    })
    .meta({ dependentRequired: { [field]: [needs] } }) as T;
}

/**
 * `to` with the JSON Schema metadata of `from` (the cross-field rules above), which a new schema made from it loses.
 */
export function withMetaOf<T extends z.ZodType>(from: z.ZodType, to: T): T {
  const meta = z.globalRegistry.get(from);
  return meta ? (to.meta(meta) as T) : to;
}
