/**
 * The HTTP check types: the fields every one of them sends and accepts, and the nine types built on them.
 */
import { z } from "@hono/zod-openapi";
import { CONNECTION_HEADERS, headerFields, headerName } from "../../../http/header-fields";
import { httpUrl, jsonValue } from "../../../openapi/schemas";
import { MAX_EXPRESSION_CHARS } from "../../../expressions/jsonata";
import { MAX_ITEMS_PER_EVENT, MAX_RESPONSE_BYTES, MAX_TIMEOUT_MS } from "./limits";

const statusSpec = z.union([z.int().min(100).max(599), z.enum(["1xx", "2xx", "3xx", "4xx", "5xx"])]);
const regexSource = z
  .string()
  .min(1)
  .max(500)
  .describe("A regular expression (JavaScript syntax, no backreferences or nested quantifiers).")
  .openapi("WatchRegex");

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

/** The literal `check.type` that tells a check type apart (check-schema.ts uses it too). */
export const type = <T extends string>(name: T) => z.literal(name);

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

export const rssCheck = httpRequest
  .extend({ type: type("rss") })
  .strict()
  .describe(`RSS or Atom: watch.changed carries the new items (at most ${MAX_ITEMS_PER_EVENT}).`);

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
