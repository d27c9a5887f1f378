/**
 * Request and response shapes of proxies: an auth-gated reverse proxy (oauth2-proxy, ngrok's
 * traffic policies). Callers prove themselves with the proxy's own credential or come from an
 * allowed range; the upstream's secrets are injected here and never shown back. The same schemas
 * validate, type and document.
 */
import { z } from "@hono/zod-openapi";
import { pageLimit, seqCursor, singleLine } from "../../../openapi/schemas";
import { requestFields } from "../../../delivery/outbound";
import { CONNECTION_HEADERS, headerName, headerValue, MAX_HEADERS } from "../../../http/header-fields";
import { parseCidr } from "../../../http/cidr";
import { MIN_MASKED_LENGTH } from "../../../http/masking";
import { MAX_PUBLIC_BODY_BYTES } from "../../../kind/public-face";

/** A request's body, streamed on to the upstream: larger is 413. Answers stream back unbounded. */
export const MAX_BODY_BYTES = MAX_PUBLIC_BODY_BYTES;
export const MAX_ALLOWED_RANGES = 50;
export const MAX_INJECTED_QUERY = 20;
/** Requests the log keeps (the newest). */
export const LOG_KEPT = 1000;
export const MAX_RATE_PER_MINUTE = 60_000;

export const AUTH_TYPES = ["bearer", "basic", "none"] as const;

const secretValue = z.string().min(MIN_MASKED_LENGTH).max(4096);
const secretParam = secretValue.regex(
  /^[^\u0000-\u001f\u007f-\u009f]*$/,
  "must be one line of text without control characters",
);

export const proxyCreate = z
  .object({
    upstream_url: requestFields.url.describe(
      "The upstream: the path below the proxy's address is appended to its path, the query to its query.",
    ),
    auth: z
      .enum(AUTH_TYPES)
      .default("bearer")
      .describe(
        "The credential callers show: `bearer` (`Authorization: Bearer zvp_…`) or `basic` (the username " +
          "and a password), made by the service and returned once in `credential`; `none`: only `allow_ips` " +
          "reach the upstream.",
      ),
    basic_username: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[\x21-\x39\x3b-\x7e]+$/, "must be printable ASCII without spaces or colons")
      .default("agent")
      .describe("The username of a `basic` credential."),
    allow_ips: z
      .array(
        z
          .string()
          .max(64)
          .refine((t) => parseCidr(t) !== null, "must be an IP address or a CIDR range (192.0.2.0/24, 2001:db8::/32)"),
      )
      .max(MAX_ALLOWED_RANGES)
      .default([])
      .describe("Callers from these addresses or ranges reach the upstream without the credential."),
    inject_headers: z
      .record(headerName, headerValue.pipe(secretValue))
      .default({})
      .refine((h) => Object.keys(h).length <= MAX_HEADERS, `at most ${MAX_HEADERS} headers`)
      .refine(
        (h) => !Object.keys(h).some((k) => CONNECTION_HEADERS.test(k)),
        "host and framing headers are set by the service",
      )
      .describe(
        `Headers added to every request to the upstream (an API key): sealed at once, never shown again, ` +
          `and masked (${MIN_MASKED_LENGTH} characters or more) wherever an answer repeats them.`,
      ),
    inject_query: z
      .record(singleLine(100).min(1), secretParam)
      .default({})
      .refine((q) => Object.keys(q).length <= MAX_INJECTED_QUERY, `at most ${MAX_INJECTED_QUERY} parameters`)
      .describe(
        "Query parameters added to every request to the upstream (replacing a caller's of the same name): " +
          "sealed and masked like inject_headers.",
      ),
    rate_limit_per_minute: z
      .int()
      .min(1)
      .max(MAX_RATE_PER_MINUTE)
      .default(600)
      .describe(
        "Requests the proxy passes per minute, all callers together; beyond, 429 with Retry-After (logged, " +
          "nothing passed).",
      ),
  })
  .strict()
  .refine((c) => c.auth !== "none" || c.allow_ips.length > 0, {
    message: "with auth none, allow_ips must name who may call",
    path: ["allow_ips"],
  });
export type ProxyCreate = z.infer<typeof proxyCreate>;

/** What the record shows: the injected values' names only. */
export type ProxyConfig = Omit<ProxyCreate, "inject_headers" | "inject_query"> & {
  inject_headers: string[];
  inject_query: string[];
};

export const credential = z.object({
  type: z.enum(["bearer", "basic"]),
  authorization: z.string().describe("The `Authorization` header value callers send."),
  token: z.string().optional().describe("bearer: the token."),
  username: z.string().optional(),
  password: z.string().optional(),
});

export const proxyInfo = z.object({
  upstream_url: z.string(),
  auth: z.enum(AUTH_TYPES),
  allow_ips: z.array(z.string()),
  inject_headers: z.array(z.string()).describe("Names only: the values are sealed."),
  inject_query: z.array(z.string()),
  rate_limit_per_minute: z.int(),
  passed: z.int(),
  denied: z.int().describe("Refused with 401: no valid credential, not from an allowed range."),
  rate_limited: z.int(),
});

export const logEntry = z.object({
  seq: z.int(),
  at: z.string(),
  method: z.string(),
  path: z.string().describe("Below the address, with the caller's query."),
  caller_ip: z.string().nullable(),
  via: z.enum(["credential", "ip"]).nullable().describe("How the caller got in; null: it did not."),
  status: z
    .int()
    .nullable()
    .describe(
      "The answer's status: the upstream's, 502 when it could not be reached, or the proxy's own refusal " +
        "(401, 429); null while unknown.",
    ),
  duration_ms: z.int().nullable().describe("Until the upstream's answer began."),
});

export const logInput = z.object({
  cursor: seqCursor.describe("A previous page's next_cursor."),
  limit: pageLimit(20),
});
export const logPage = z.object({ items: z.array(logEntry), next_cursor: z.string().nullable() });
