/**
 * Request and response shapes of watches. The create body is the watch (interval, thresholds,
 * where alerts go) with the check it makes in `check`, one of 13 types told apart by
 * `check.type`. Every limit is published here, in the OpenAPI descriptions and the price list.
 */
import { z } from "@hono/zod-openapi";
import { CONNECTION_HEADERS, headerFields, headerName } from "../../../http/header-fields";
import {
  httpUrl,
  jsonValue,
  managementTokenOf,
  pageLimit,
  pageOf,
  rfc3339,
  seqCursor,
  singleLine,
} from "../../../openapi/schemas";
import { notifyTarget } from "../../address/notify/people";
import { MAX_EXPRESSION_CHARS } from "../../../expressions/jsonata";

/** Checking more often than once a minute is load testing, not watching; the day price assumes at most 1440 checks. */
export const MIN_INTERVAL_SECONDS = 60;
export const MAX_INTERVAL_SECONDS = 86400;
export const MAX_TIMEOUT_MS = 30_000;
/** The largest answer a check reads (`max_bytes`); a larger one fails the check. */
export const MAX_RESPONSE_BYTES = 5 * 1024 * 1024;
/** Checks kept in the history; older ones are dropped (the state keeps the counts). */
export const MAX_HISTORY = 1000;
/** The part of an answer kept with a check, and sent as evidence with an event. */
export const EXCERPT_CHARS = 512;
/** RSS/Atom item ids remembered to tell new items from old, and items sent in one event. */
export const MAX_SEEN_ITEMS = 500;
export const MAX_ITEMS_PER_EVENT = 20;

const statusSpec = z.union([z.int().min(100).max(599), z.enum(["1xx", "2xx", "3xx", "4xx", "5xx"])]);
const regexSource = z
  .string()
  .min(1)
  .max(500)
  .describe("A regular expression (JavaScript syntax, no backreferences or nested quantifiers).")
  .openapi("WatchRegex");
const comparison = z.enum(["==", "!=", "<", "<=", ">", ">="]);

/**
 * What every HTTP check sends and accepts. Each field is one component of the OpenAPI document
 * (nine types share them), so the document says it once.
 */
const httpRequest = z.object({
  url: httpUrl
    .describe("The URL checked (http or https, public); up to 5 redirects followed, each hop checked.")
    .openapi("WatchCheckUrl"),
  method: z.enum(["GET", "HEAD", "POST"]).default("GET").openapi("WatchCheckMethod"),
  headers: headerFields(CONNECTION_HEADERS, "host and connection-level headers are set by the service")
    .describe("Headers sent with every check (the default user-agent is `{service}-watch/1.0 ({resource id})`).")
    .openapi("WatchCheckHeaders"),
  body: z
    .string()
    .max(64 * 1024)
    .nullable()
    .default(null)
    .describe("A body for POST checks (sent as given).")
    .openapi("WatchCheckBody"),
  expected_status: z
    .array(statusSpec)
    .min(1)
    .max(20)
    .default(["2xx"])
    .describe("Statuses that count as up: codes (204) or classes (`2xx`); every HTTP type checks them first.")
    .openapi("WatchExpectedStatus"),
  max_bytes: z
    .int()
    .min(1024)
    .max(MAX_RESPONSE_BYTES)
    .default(1024 * 1024)
    .describe(`The most of an answer a check reads (1 KiB–${MAX_RESPONSE_BYTES} bytes); more fails the check.`)
    .openapi("WatchMaxBytes"),
});

const type = <T extends string>(name: T) => z.literal(name);

export const httpStatusCheck = httpRequest
  .extend({ type: type("http_status") })
  .strict()
  .describe("Up while the final status is one of expected_status.");

export const keywordCheck = httpRequest
  .extend({
    type: type("keyword"),
    keyword: z.string().min(1).max(1000).describe("Text looked for in the answer's body."),
    mode: z
      .enum(["present", "absent"])
      .default("present")
      .describe("Up while the keyword is present (default) or absent."),
    case_sensitive: z.boolean().default(false),
  })
  .strict();

export const contentChangeCheck = httpRequest
  .extend({
    type: type("content_change"),
    selector: z
      .string()
      .min(1)
      .max(200)
      .nullable()
      .default(null)
      .describe("CSS selector (e.g. `#price`): compare only the text of the matching elements (HTML answers)."),
    region: z
      .object({ start: z.string().min(1).max(500), end: z.string().min(1).max(500).nullable().default(null) })
      .strict()
      .nullable()
      .default(null)
      .describe("Or the text from `start` to the next `end` (or the body's end)."),
    ignore: z
      .array(regexSource)
      .max(10)
      .default([])
      .describe("Noise (timestamps, counters) removed before comparing. Whitespace is always collapsed."),
  })
  .strict()
  .describe("watch.changed when the text changes (the first check is the baseline).");

export const jsonValueCheck = httpRequest
  .extend({
    type: type("json_value"),
    expression: z
      .string()
      .min(1)
      .max(MAX_EXPRESSION_CHARS)
      .describe("A JSONata expression over the JSON answer (simple JSONPath like `$.status.db` reads the same)."),
    operator: z
      .enum(["==", "!=", "<", "<=", ">", ">=", "contains", "changed"])
      .describe("Up while `value {operator} expected` holds; `changed`: watch.changed when the value changes."),
    expected: jsonValue.optional().describe("What the value is compared with (not for `changed`)."),
  })
  .strict();

export const responseTimeCheck = httpRequest
  .extend({
    type: type("response_time"),
    threshold_ms: z
      .int()
      .min(1)
      .max(MAX_TIMEOUT_MS)
      .describe("Up while the whole answer arrives within this many milliseconds."),
  })
  .strict();

export const headerCheck = httpRequest
  .extend({
    type: type("header"),
    name: headerName.describe("The response header checked (case-insensitive)."),
    equals: z.string().max(4096).optional(),
    matches: regexSource.optional(),
    absent: z.boolean().default(false),
  })
  .strict()
  .describe("Up while the header equals `equals`, matches `matches`, is `absent`, or (none given) is present.");

export const redirectCheck = httpRequest
  .extend({
    type: type("redirect"),
    final_url: httpUrl
      .nullable()
      .describe("Up while the redirects end at this URL; null: up while there is no redirect at all."),
  })
  .strict();

export const DNS_TYPES = ["A", "AAAA", "CNAME", "MX", "NS", "TXT", "PTR"] as const;
const hostname = z
  .string()
  .min(1)
  .max(253)
  .regex(
    /^(?!-)[A-Za-z0-9_-]{1,63}(?<!-)(\.(?!-)[A-Za-z0-9_-]{1,63}(?<!-))*\.?$/,
    "must be a DNS name (letters, digits, hyphens; IDNs in their xn-- form)",
  )
  .openapi("DnsName");

export const dnsRecordCheck = z
  .object({
    type: type("dns_record"),
    name: hostname,
    record_type: z.enum(DNS_TYPES).default("A"),
    expected: z
      .array(z.string().min(1).max(1000))
      .max(50)
      .default([])
      .describe(
        "Expected values (`10 mx.example.com` for MX); empty: up while any record answers. A change sends " +
          "watch.changed.",
      ),
    match: z
      .enum(["exact", "contains"])
      .default("exact")
      .describe("`exact`: the answer is exactly the expected set; `contains`: it includes every expected value."),
    resolver_url: httpUrl.default("https://cloudflare-dns.com/dns-query").describe("A DNS-over-HTTPS resolver."),
    format: z
      .enum(["json", "wire"])
      .default("json")
      .describe("`json`: application/dns-json (Cloudflare, Google); `wire`: RFC 8484 application/dns-message."),
  })
  .strict();

export const rssCheck = httpRequest
  .extend({ type: type("rss") })
  .strict()
  .describe(`RSS or Atom: watch.changed carries the new items (at most ${MAX_ITEMS_PER_EVENT}).`);

export const heartbeatCheck = z
  .object({
    type: type("heartbeat"),
    grace_seconds: z
      .int()
      .min(0)
      .max(86400)
      .default(60)
      .describe("How late a ping may be: up while one arrived within the last interval_seconds + grace_seconds."),
  })
  .strict()
  .describe(
    "Inbound pings at the resource's public address (GET or POST `/p/{public_id}`; `/fail` reports a failure).",
  );

export const domainExpiryCheck = z
  .object({
    type: type("domain_expiry"),
    domain: hostname,
    days_before: z
      .int()
      .min(1)
      .max(365)
      .default(30)
      .describe("Down when the registration expires within this many days."),
    rdap_url: httpUrl
      .default("https://rdap.org")
      .describe("The RDAP service; the check reads `{rdap_url}/domain/{domain}` and its `expiration` event."),
  })
  .strict();

const evmAddress = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, "must be a 0x-prefixed 20-byte address")
  .openapi("EvmAddress");
export const chainBalanceCheck = z
  .object({
    type: type("chain_balance"),
    rpc_url: httpUrl.describe("An EVM JSON-RPC endpoint."),
    address: evmAddress,
    token: evmAddress
      .nullable()
      .default(null)
      .describe("An ERC-20 contract (its balanceOf); null for the chain's own coin (eth_getBalance)."),
    operator: comparison.describe("Up while `balance {operator} threshold` holds."),
    threshold: z
      .string()
      .regex(/^\d{1,78}$/, "must be a whole number of base units (wei), as a decimal string")
      .describe("In base units (wei, or the token's smallest unit)."),
  })
  .strict();

export const numberThresholdCheck = httpRequest
  .extend({
    type: type("number_threshold"),
    regex: regexSource.optional(),
    expression: z.string().min(1).max(MAX_EXPRESSION_CHARS).optional(),
    operator: z
      .enum(["==", "!=", "<", "<=", ">", ">=", "changed_by_percent"])
      .describe(
        "Up while `number {operator} value` holds; `changed_by_percent`: watch.changed when it moved more " +
          "than `value`%.",
      ),
    value: z.number().describe("The threshold, or the percentage."),
  })
  .strict()
  .describe(
    "The number: the first group of `regex` (or its whole match) in the body, or the JSONata `expression` " +
      "on the JSON answer.",
  );

export const check = z.discriminatedUnion("type", [
  httpStatusCheck,
  keywordCheck,
  contentChangeCheck,
  jsonValueCheck,
  responseTimeCheck,
  headerCheck,
  redirectCheck,
  dnsRecordCheck,
  rssCheck,
  heartbeatCheck,
  domainExpiryCheck,
  chainBalanceCheck,
  numberThresholdCheck,
]);
export type Check = z.infer<typeof check>;
export type CheckType = Check["type"];
export type HttpCheck = Extract<Check, { url: string; method: string }>;

export const escalationTarget = managementTokenOf(
  ["escalations"],
  "must be an escalations resource's management token (zvm_…)",
)
  .nullable()
  .default(null)
  .describe(
    "An escalations resource's management token: down opens an incident there, up resolves it (only its id is kept).",
  );

export const watchConfig = z.object({
  check,
  interval_seconds: z
    .int()
    .min(MIN_INTERVAL_SECONDS)
    .max(MAX_INTERVAL_SECONDS)
    .default(300)
    .describe(`Seconds between checks (${MIN_INTERVAL_SECONDS}–${MAX_INTERVAL_SECONDS}); the first is made at once.`),
  timeout_ms: z
    .int()
    .min(1000)
    .max(MAX_TIMEOUT_MS)
    .default(10_000)
    .describe("A check not answered within this long fails."),
  alert_after: z.int().min(1).max(100).default(1).describe("Consecutive failed checks before watch.down."),
  recover_after: z.int().min(1).max(100).default(1).describe("Consecutive good checks before watch.up."),
  realert_seconds: z
    .int()
    .min(MIN_INTERVAL_SECONDS)
    .max(7 * 86400)
    .nullable()
    .default(null)
    .describe("While down, watch.down is sent again this often (null: once)."),
  paused: z.boolean().default(false).describe("Start paused."),
  alert_notify: notifyTarget("down, up and changed alerts"),
  escalation: escalationTarget,
});
export type WatchConfig = z.infer<typeof watchConfig>;

export const STATES = ["pending", "up", "down", "paused"] as const;
export type WatchState = (typeof STATES)[number];

export const checkResult = z
  .object({
    seq: z.int(),
    at: rfc3339,
    scheduled_at: rfc3339.nullable().describe("When it was due (null: asked for)."),
    ok: z.boolean(),
    status: z.int().nullable().describe("The HTTP status, or the DNS RCODE."),
    duration_ms: z.int().nullable(),
    error: z.string().nullable().describe("Why the check failed."),
    value: jsonValue.nullable().describe("What the check read."),
    changed: z.boolean(),
    excerpt: z.string().nullable().describe(`The answer's first ${EXCERPT_CHARS} characters.`),
  })
  .openapi("WatchCheck");

export const watchStatus = z
  .object({
    state: z.enum(STATES),
    check_type: z.string(),
    consecutive_failures: z.int(),
    consecutive_successes: z.int(),
    checks: z.int(),
    failures: z.int(),
    changes: z.int(),
    alerts_sent: z.int(),
    down_since: rfc3339.nullable(),
    last_check: checkResult.nullable(),
    next_check_at: rfc3339.nullable(),
    last_ping_at: rfc3339.nullable().describe("Heartbeat: the last ping."),
    followers: z.int().describe("Groups following it."),
  })
  .openapi("WatchStatus");

export const historyInput = z.object({
  limit: pageLimit(50),
  cursor: seqCursor,
  only: z.enum(["all", "failures", "changes"]).default("all"),
});
export const historyPage = pageOf(checkResult);

export const pingQuery = z.object({ message: singleLine(200).optional() });
