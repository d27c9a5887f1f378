/** Request and response shapes of egress-connectors; the same schemas validate, type and document. */
import { z } from "@hono/zod-openapi";
import { CONNECTION_HEADERS, headerFields } from "../../../http/header-fields";
import { atMostOneOf, httpUrl, pageLimit, pageOf, seqCursor } from "../../../openapi/schemas";

export const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;
export const DEFAULT_RESPONSE_BYTES = 1024 * 1024;
export const MAX_REQUEST_BYTES = 1_000_000;
export const MAX_HOSTS = 100;
/** Requests kept in the log (the newest; the count goes on). */
export const MAX_REQUEST_LOG = 1000;

/**
 * An allowed host as written: `api.example.com`, `*.example.com` (any name below it, not itself), either
 * with `:port` (only that port; without, any). Its canonical spelling (lower case, IDNA, no trailing dot)
 * is worked out by hostPattern() in store.ts, which also refuses what this cannot say.
 */
const hostEntry = z
  .string()
  .min(1)
  .max(260)
  .regex(
    /^(\*\.)?[^*/\\?#@\s\u0000-\u001f\u007f]+$/,
    "must be a host name, `*.` and a host name, or an IP address, optionally with :port (no scheme, path " +
      "or credentials)",
  );

const forwarded = headerFields(
  CONNECTION_HEADERS,
  "Host, framing (Content-Length, Transfer-Encoding, Connection …) and Proxy-* headers are set by the connector.",
);

export const connectorCreate = z.object({
  allowed_hosts: z
    .array(hostEntry)
    .min(1)
    .max(MAX_HOSTS)
    .describe(
      "Hosts requests may go to: exact names (`api.stripe.com`), wildcards (`*.example.com`: every name " +
        "below example.com, not example.com itself) or IP addresses, each optionally with `:port`. A request " +
        "to any other host is refused with 403, and not charged.",
    ),
  headers: forwarded.describe(
    "Headers added to every request (an API key the target expects): kept sealed, shown back by name only. " +
      "A request's own header of the same name wins.",
  ),
  max_response_bytes: z
    .int()
    .min(1)
    .max(MAX_RESPONSE_BYTES)
    .default(DEFAULT_RESPONSE_BYTES)
    .describe(
      `Largest answer body returned (at most ${MAX_RESPONSE_BYTES}); a larger one is refused with 413 and not charged.`,
    ),
});
export type ConnectorCreate = z.infer<typeof connectorCreate>;

/** What the record shows: the sealed headers by name, the hosts canonical, and the addresses requests leave from. */
export type ConnectorConfig = Omit<ConnectorCreate, "headers"> & { header_names: string[]; egress_ips: string[] };

export const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;

export const fetchInput = atMostOneOf(
  z.object({
    url: httpUrl.describe(
      "The target: http or https, to an allowed host (and checked like every outbound call: no private or " +
        "loopback addresses).",
    ),
    method: z.enum(METHODS).default("GET"),
    headers: forwarded.describe("Request headers (a request's own header wins over the connector's of the same name)."),
    body: z.string().max(MAX_REQUEST_BYTES).optional().describe("A text body, sent as UTF-8."),
    body_base64: z
      .base64()
      .max(Math.ceil(MAX_REQUEST_BYTES / 3) * 4)
      .optional()
      .describe(`Or the body as bytes, standard base64 (at most ${MAX_REQUEST_BYTES} bytes decoded).`),
    timeout_seconds: z
      .int()
      .min(1)
      .max(60)
      .default(30)
      .describe("The whole exchange (tunnel, request, answer) must finish within this; else 502, not charged."),
  }),
  ["body", "body_base64"],
);
export type FetchInput = z.infer<typeof fetchInput>;

export const fetchedView = z
  .object({
    request_id: z.string(),
    url: z.string(),
    method: z.string(),
    status: z
      .int()
      .describe("The target's status, whatever it is (a 500 from the target is a completed, charged call)."),
    headers: z
      .record(z.string(), z.string())
      .describe(
        'The answer\'s header fields, lower-case names; repeated ones joined with ", " (Set-Cookie with a line feed).',
      ),
    body: z
      .string()
      .nullable()
      .describe("The body as text, when it is valid UTF-8; else null and `body_base64` holds it."),
    body_base64: z.string().nullable().describe("The body as standard base64, when it is not valid UTF-8."),
    bytes: z.int(),
    sha256: z.string().describe("Hex SHA-256 of the body's bytes."),
    duration_ms: z.int(),
    egress_ips: z
      .array(z.string())
      .describe("The addresses the request could have left from (the proxy's published set)."),
    at: z.string(),
  })
  .openapi("EgressFetched");
export type FetchedView = z.infer<typeof fetchedView>;

export const requestLogEntry = z
  .object({
    seq: z.int(),
    request_id: z.string(),
    at: z.string(),
    method: z.string(),
    url: z.string().describe("Scheme, host and path; the query is not kept (it may carry secrets)."),
    status: z.int(),
    bytes_sent: z.int(),
    bytes_received: z.int(),
    duration_ms: z.int(),
  })
  .openapi("EgressRequest");
export type RequestLogEntry = z.infer<typeof requestLogEntry>;

export const requestsInput = z.object({
  limit: pageLimit(50),
  cursor: seqCursor.describe("`next_cursor` of the previous page."),
});
export const requestsPage = pageOf(requestLogEntry).openapi("EgressRequestPage");
