/**
 * Request and response shapes of attest: the service fetches a URL, keeps the
 * bytes in R2 and signs a receipt (compact JWS) over what it asked and what it got.
 * The receipt's payload is documented field by field here, since verifiers
 * outside this service depend on it.
 */
import { z } from "@hono/zod-openapi";
import { CONNECTION_HEADERS, headerFields, headerName } from "../../../http/header-fields";
import { pageLimit, seqCursor, pageOf } from "../../../openapi/schemas";

/** Largest body kept per fetch; a larger answer is a 413 and not charged. */
export const MAX_BODY_BYTES = 10 * 1024 * 1024;
/** Fetches one resource keeps: its export (every receipt) stays well below a Durable Object RPC answer. */
export const MAX_FETCHES = 1000;
/** Bytes one resource keeps in R2 over all its fetches. */
export const MAX_STORED_BYTES = 1024 * 1024 * 1024;
/** Bodies up to this size come back inline (text or base64); larger ones only through content_url. */
export const INLINE_MAX_BYTES = 256 * 1024;

/** The `typ` header of a receipt: not an access token (`at+jwt`), not a statement (`statement+json`). */
export const RECEIPT_TYP = "fetch-receipt+json";

/** Response headers a receipt records unless told otherwise: what says what the content is and when it was current. */
export const DEFAULT_RECEIPT_HEADERS = ["content-type", "content-language", "date", "etag", "last-modified"];

const receiptHeaders = z
  .array(z.union([headerName, z.literal("*")]))
  .max(32)
  .transform((names) => [...new Set(names.map((n) => n.toLowerCase()))]);

export const attestConfig = z.object({
  receipt_headers: receiptHeaders
    .default(DEFAULT_RECEIPT_HEADERS)
    .describe(
      `Response headers every receipt records (a fetch may name its own); \`*\` records all. Default: ` +
        `${DEFAULT_RECEIPT_HEADERS.join(", ")}.`,
    ),
  max_bytes: z
    .int()
    .min(1)
    .max(MAX_BODY_BYTES)
    .default(MAX_BODY_BYTES)
    .describe(
      `Largest body a fetch accepts unless it says otherwise (at most ${MAX_BODY_BYTES}); a larger answer ` +
        `is a 413, not charged.`,
    ),
});

export type AttestConfig = z.infer<typeof attestConfig>;

export const fetchInput = z.object({
  url: z
    .url({ protocol: /^https?$/ })
    .max(2048)
    .meta({ format: "uri" })
    .describe(
      "What to fetch: http or https to a public address; redirects are followed (at most 5), each hop checked.",
    ),
  method: z.enum(["GET", "HEAD"]).default("GET"),
  headers: headerFields(CONNECTION_HEADERS, "host and connection-level headers are set by the service").describe(
    "Request headers to send (e.g. accept-language, or an authorization the page needs). Their names are " +
      "in the receipt; their values are neither signed nor stored.",
  ),
  receipt_headers: receiptHeaders
    .optional()
    .describe("Response headers this receipt records, instead of the resource's receipt_headers; `*` records all."),
  max_bytes: z
    .int()
    .min(1)
    .max(MAX_BODY_BYTES)
    .optional()
    .describe("Largest body accepted for this fetch, instead of the resource's max_bytes."),
  include_content: z
    .boolean()
    .default(true)
    .describe(`Return the body inline when it is at most ${INLINE_MAX_BYTES} bytes.`),
});

export type FetchInput = z.infer<typeof fetchInput>;

export const fetchIdField = z.string().regex(/^att_[0-9a-f]{32}$/, "must be a fetch_id (att_ and 32 hex digits)");

export const getInput = z.object({
  fetch_id: fetchIdField,
  include_content: z
    .enum(["true", "false"])
    .default("true")
    .transform((v) => v === "true")
    .describe(`Return the body inline when it is at most ${INLINE_MAX_BYTES} bytes.`),
});

export const listInput = z.object({ limit: pageLimit(), cursor: seqCursor });

export const receiptPayload = z
  .object({
    iss: z.string().describe("Who signed: the service's auth URL; its keys are at `{iss}/.well-known/jwks.json`."),
    receipt_id: z.string().describe("Unique per receipt; the fetch's `fetch_id`."),
    resource_id: z.string().describe("The attest resource the fetch was made for."),
    method: z.enum(["GET", "HEAD"]),
    url: z.string().describe("The URL requested (as normalised by the WHATWG URL parser)."),
    final_url: z.string().describe("The URL that answered, after redirects (equal to `url` when there were none)."),
    request_headers: z
      .array(z.string())
      .describe(
        "Names (lowercase, sorted) of every request header sent, including the service's user-agent; never " +
          "their values.",
      ),
    status: z.int().describe("The HTTP status of the final answer; any status is attested, 4xx and 5xx included."),
    headers: z
      .record(z.string(), z.string().nullable())
      .describe("The selected response headers (lowercase names); null for one that was asked for and absent."),
    body_sha256: z
      .string()
      .describe(
        "SHA-256 of the body bytes as received (after content-encoding is undone), 64 lowercase hex " +
          "digits; of zero bytes for HEAD.",
      ),
    body_size: z.int().describe("Size of the body in bytes."),
    fetched_at: z.string().describe("When the answer was complete (RFC 3339 UTC, milliseconds)."),
  })
  .openapi("FetchReceiptPayload", {
    description:
      "The payload of a fetch receipt, exactly as signed: the JSON object in the compact JWS whose " +
      "protected header is " +
      `\`{ "alg": "RS256", "kid": <a key in /.well-known/jwks.json>, "typ": "${RECEIPT_TYP}" }\`. ` +
      "Verify with any JOSE library (e.g. jose `compactVerify` against the JWKS), check `typ`, then " +
      "compare `body_sha256` with the SHA-256 of the content.",
  });

export type ReceiptPayload = z.infer<typeof receiptPayload>;

const inlineContent = z
  .object({
    encoding: z
      .enum(["text", "base64"])
      .describe("text: a UTF-8 body of a textual content type, as a string; base64: anything else."),
    data: z.string(),
  })
  .nullable()
  .describe(
    `The body inline when it is at most ${INLINE_MAX_BYTES} bytes (and include_content is true); else ` +
      `null, and content_url gives it.`,
  );

export const fetchRecord = z
  .object({
    fetch_id: z.string(),
    url: z.string(),
    final_url: z.string(),
    method: z.enum(["GET", "HEAD"]),
    status: z.int(),
    content_type: z.string().nullable().describe("The answer's content-type header, if any."),
    body_sha256: z.string(),
    body_size: z.int(),
    fetched_at: z.string(),
    content_url: z
      .string()
      .describe("Downloads the exact bytes without credentials until the resource ends (Range works)."),
    receipt: z.object({
      jws: z
        .string()
        .describe(
          `Compact JWS (RS256, typ ${RECEIPT_TYP}, kid in /.well-known/jwks.json) whose payload is \`payload\`.`,
        ),
      payload: receiptPayload,
    }),
  })
  .openapi("AttestedFetchSummary");

export const attestedFetch = fetchRecord.extend({ content: inlineContent }).openapi("AttestedFetch");

export const fetchPage = pageOf(fetchRecord).openapi("AttestedFetchPage", {
  description: "Fetches, oldest first, without their content.",
});
