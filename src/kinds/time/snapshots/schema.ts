/**
 * Request and response shapes of snapshots: a URL fetched on an interval or a
 * cron, every answer kept in R2 with what it said about itself, and a `changed`
 * flag against the last good one. The limits are published here, in the
 * OpenAPI descriptions, and enforced by the schemas (422) and the fetch.
 */
import { z } from "@hono/zod-openapi";
import { CONNECTION_HEADERS, headerFields } from "../../../http/header-fields";
import { cronExpression, cronProblem, validTimeZone } from "../cron";
import { SELECTED_TEXT_MAX, selectorProblem } from "./compare";
import { exactlyOneOf, pageLimit, seqCursor, pageOf, rfc3339, httpUrl } from "../../../openapi/schemas";

/** Fetching more often than once a minute is polling, not snapshotting; the day price assumes at most 1440 fetches. */
export const MIN_INTERVAL_SECONDS = 60;
export const MAX_INTERVAL_SECONDS = 30 * 86400;
/** A larger answer is recorded as a failed fetch (nothing stored): it bounds R2 and the object's memory. */
export const MAX_BODY_BYTES = 10 * 1024 * 1024;
export const MAX_KEEP_LAST = 100;
/** Text bodies up to this size come back inline from GET /snapshot; anything else through content_url. */
export const INLINE_MAX_BYTES = 256 * 1024;
/** Response headers each snapshot records: what the content is, and when and by whom it was current. */
export const RECORDED_HEADERS = [
  "content-type",
  "content-language",
  "content-length",
  "etag",
  "last-modified",
  "cache-control",
  "expires",
  "age",
  "date",
  "server",
  "retry-after",
];

export const snapshotConfig = exactlyOneOf(
  z.object({
    url: httpUrl.describe(
      "The page or file to snapshot: http or https to a public address; redirects are followed (at most " +
        "5), each hop checked.",
    ),
    headers: headerFields(CONNECTION_HEADERS, "host and connection-level headers are set by the service").describe(
      "Request headers sent with every fetch (e.g. accept-language, user-agent, an authorization the page " +
        "needs). They are part of `config` in the record.",
    ),
    interval_seconds: z
      .int()
      .min(MIN_INTERVAL_SECONDS)
      .max(MAX_INTERVAL_SECONDS)
      .optional()
      .describe(
        `Fetch every this many seconds (${MIN_INTERVAL_SECONDS}–${MAX_INTERVAL_SECONDS}). ` + "Give this or cron.",
      ),
    cron: cronExpression
      .optional()
      .describe("Or fetch on a 5-field cron (minute hour day-of-month month day-of-week), read in `timezone`."),
    timezone: z
      .string()
      .max(64)
      .default("UTC")
      .describe("IANA time zone of the cron fields (e.g. `Europe/Berlin`); a 422 names an unknown one."),
    start_at: rfc3339
      .optional()
      .describe(
        "No scheduled fetch before this time (a time in the past means now). Default: the first snapshot, " +
          "the baseline, is taken at once. No fetch is scheduled at or after the resource's expiry.",
      ),
    keep_last: z
      .int()
      .min(1)
      .max(MAX_KEEP_LAST)
      .default(20)
      .describe(
        `Snapshots kept (1–${MAX_KEEP_LAST}); older ones and their bytes are deleted. The newest good ` +
          `snapshot is always kept, as the baseline for \`changed\`.`,
      ),
    selector: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe(
        "CSS selector (e.g. `#price`, `main .status`): for HTML answers, `changed` compares only the text " +
          "inside the matching elements, shown as `selected_text`. The whole page is still stored. Other " +
          "content types compare whole.",
      ),
    ignore_whitespace: z
      .boolean()
      .default(false)
      .describe(
        "For text bodies (or the selected text), compare with runs of whitespace collapsed, so " +
          "reformatting alone is not a change. `sha256` is always of the exact bytes.",
      ),
    webhook_url: httpUrl
      .optional()
      .describe(
        "Receives the signed `snapshot.changed` and `snapshot.failed` events. Default: notify_url; with " +
          "neither, the agent polls.",
      ),
  }),
  ["interval_seconds", "cron"],
).superRefine((c, ctx) => {
  const selector = c.selector === undefined ? null : selectorProblem(c.selector);
  if (selector) ctx.addIssue({ code: "custom", path: ["selector"], message: selector });
  if (!validTimeZone(c.timezone))
    ctx.addIssue({ code: "custom", path: ["timezone"], message: "is not an IANA time zone" });
  else if (c.cron !== undefined) {
    const problem = cronProblem(c.cron, c.timezone);
    if (problem) ctx.addIssue({ code: "custom", path: ["cron"], message: problem });
  }
});

export type SnapshotConfig = z.infer<typeof snapshotConfig>;

const flag = (fallback: "true" | "false", description: string) =>
  z
    .enum(["true", "false"])
    .default(fallback)
    .transform((v) => v === "true")
    .describe(description);

export const listInput = z.object({
  limit: pageLimit(),
  cursor: seqCursor,
  changed_only: flag("false", "Only snapshots whose content changed."),
});

export const readInput = z.object({
  seq: z.coerce.number().int().min(1).optional().describe("Which snapshot (its `seq`); default the newest."),
  include_content: flag(
    "true",
    `Return a text body inline when it is valid UTF-8 and at most ${INLINE_MAX_BYTES} bytes.`,
  ),
});

export type ReadInput = z.infer<typeof readInput>;

export const snapshot = z
  .object({
    seq: z.int().describe("Increases with every fetch; the list's cursor."),
    fetched_at: z.string(),
    manual: z.boolean().describe("Taken by POST /snapshots rather than by the schedule."),
    ok: z
      .boolean()
      .describe("The target answered 2xx. Anything else is a failed fetch: recorded, never compared, never a change."),
    status: z
      .int()
      .nullable()
      .describe(
        "HTTP status of the answer after redirects; null when none came (network error, timeout, refused " +
          "address, too large).",
      ),
    error: z.string().nullable().describe("Why the fetch failed; null when ok."),
    final_url: z.string().nullable().describe("The URL that answered, after redirects."),
    headers: z
      .record(z.string(), z.string())
      .describe(`Recorded response headers (${RECORDED_HEADERS.join(", ")}), those present.`),
    content_type: z.string().nullable(),
    size: z.int().nullable().describe("Bytes of the body as received (after content decoding)."),
    sha256: z.string().nullable().describe("Hex SHA-256 of those bytes."),
    selected_text: z
      .string()
      .nullable()
      .describe(
        `With a selector and an HTML answer: the text of the matching elements, whitespace collapsed, cut ` +
          `at ${SELECTED_TEXT_MAX} characters ("" when nothing matched).`,
      ),
    changed: z
      .boolean()
      .describe(
        "The content (or the selected text) differs from the previous good snapshot's. False for the first " +
          "good one and for failed fetches.",
      ),
    content_url: z
      .string()
      .nullable()
      .describe(
        "Signed link to the stored bytes (no credentials; valid until the resource's expiry as of now); " +
          "null when nothing was stored.",
      ),
    duration_ms: z.int(),
  })
  .openapi("Snapshot");

export type SnapshotView = z.infer<typeof snapshot>;

export const snapshotWithContent = snapshot
  .extend({
    content: z
      .string()
      .nullable()
      .describe(
        "The body as text, when asked for, textual, valid UTF-8 and small enough; else null (use content_url).",
      ),
  })
  .openapi("SnapshotWithContent");

export const snapshotPage = pageOf(snapshot).openapi("SnapshotPage");

export const snapshotStatus = z
  .object({
    url: z.string(),
    interval_seconds: z.int().nullable(),
    cron: z.string().nullable(),
    timezone: z.string(),
    paused: z.boolean(),
    next_snapshot_at: z
      .string()
      .nullable()
      .describe("When the schedule fetches next; null when paused or none is left in the resource's life."),
    keep_last: z.int(),
    stored: z.int().describe("Snapshots kept now."),
    fetches: z.int().describe("Fetches made, scheduled and manual."),
    changes: z.int(),
    consecutive_failures: z.int(),
    last_changed_at: z.string().nullable(),
    latest: snapshot.nullable(),
  })
  .openapi("SnapshotStatus");
