/** Request and response shapes of debounce: events gathered per key, sent once the key has been quiet. */
import { z } from "@hono/zod-openapi";
import { requestFields } from "../../../delivery/outbound";
import { pageLimit, seqCursor, jsonValue, pageOf } from "../../../openapi/schemas";

export const MAX_WAIT_SECONDS = 7 * 86400;
/** One event, as JSON text; a larger one is refused with 413. */
export const MAX_EVENT_BYTES = 16 * 1024;
/**
 * What a window keeps in mode `all`: its newest events, at most this many and this many bytes; older ones are
 * dropped (and counted). The firing carries them in one request, which must stay under 64 KiB.
 */
export const MAX_EVENTS_PER_WINDOW = 100;
export const MAX_WINDOW_BYTES = 40 * 1024;
/** Keys with an open window at once; an event for one more is refused with 422. */
export const MAX_OPEN_WINDOWS = 1000;
export const MAX_KEY_LENGTH = 200;
/** Firings kept in the history; the oldest are forgotten beyond this. */
export const MAX_FIRED_KEPT = 1000;

export const debounceConfig = z
  .object({
    url: requestFields.url.describe("Receives debounce.fired (POST, JSON), signed with the resource's signing_secret."),
    headers: requestFields.headers.describe("Sent with every firing."),
    quiet_seconds: z
      .int()
      .min(1)
      .max(MAX_WAIT_SECONDS)
      .describe("A key's window fires once no event has come for this long."),
    max_wait_seconds: z
      .int()
      .min(1)
      .max(MAX_WAIT_SECONDS)
      .default(MAX_WAIT_SECONDS)
      .describe(
        "…and never later than this after the window's first event, however steady the stream. At least " +
          "quiet_seconds (default: the 7-day most).",
      ),
    mode: z
      .enum(["last", "all"])
      .default("last")
      .describe(
        `last: the firing carries the last event; all: every event of the window (the newest ` +
          `${MAX_EVENTS_PER_WINDOW}, ${MAX_WINDOW_BYTES} bytes at most).`,
      ),
    key_path: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}(\.[A-Za-z0-9_-]{1,64}){0,4}$/)
      .nullable()
      .default(null)
      .describe(
        "Where an event's key is read when none is given: a dotted path into a JSON event (e.g. " +
          "`data.user_id`), whose string or number value is the key.",
      ),
  })
  .refine((c) => c.max_wait_seconds >= c.quiet_seconds, {
    message: "must be at least quiet_seconds",
    path: ["max_wait_seconds"],
  });

export type DebounceConfig = z.infer<typeof debounceConfig>;

const keyField = z.string().min(1).max(MAX_KEY_LENGTH);

export const eventInput = z.object({
  event: jsonValue.optional().describe(`The event, any JSON value up to ${MAX_EVENT_BYTES} bytes (absent: null).`),
  key: keyField.optional().describe("The window it belongs to; absent: read at key_path, else the unkeyed window."),
});

export const keyInput = z.object({
  key: keyField.optional().describe("The window's key; absent: the unkeyed window."),
});

export const manyInput = z
  .object({
    key: keyField.optional().describe("The window's key; absent (without all): the unkeyed window."),
    all: z.boolean().optional().describe("Every open window (not with key)."),
  })
  .refine((v) => !(v.all && v.key !== undefined), { message: "give key or all, not both", path: ["all"] });

export const listInput = z.object({ limit: pageLimit(), cursor: seqCursor });

export const window = z
  .object({
    key: z.string().nullable().describe("null for the unkeyed window."),
    opened_at: z.string(),
    last_event_at: z.string(),
    fires_at: z
      .string()
      .describe("When it fires if no other event comes: quiet_seconds after the last event, or its max_wait deadline."),
    fire_by: z.string().describe("The max_wait deadline."),
    received: z.int().describe("Events received in this window."),
    kept: z.int(),
    dropped: z
      .int()
      .describe("Older events dropped to stay within the window's limits (mode all), or replaced (mode last)."),
    bytes: z.int(),
  })
  .openapi("DebounceWindow");

export const windowDetail = window
  .extend({
    events: z.array(z.object({ received_at: z.string(), source: z.enum(["api", "public"]), event: jsonValue })),
  })
  .openapi("DebounceWindowDetail");

export const windowPage = pageOf(window).openapi("DebounceWindowPage");

export const firing = z
  .object({
    seq: z.int(),
    key: z.string().nullable(),
    reason: z.enum(["quiet", "max_wait", "flush", "expiring"]),
    opened_at: z.string(),
    fired_at: z.string(),
    received: z.int(),
    sent: z.int().describe("Events in the request."),
    dropped: z.int(),
    delivery_id: z.string().describe("Its id in GET /v1/debounce/{id}/deliveries (and its webhook-id)."),
    outcome: z.enum(["pending", "delivered", "failed"]),
  })
  .openapi("DebounceFiring");

export const firingPage = pageOf(firing).openapi("DebounceFiringPage");

export const flushResult = z.object({ fired: z.array(firing) }).openapi("DebounceFlushResult");
export const cancelResult = z.object({ cancelled: z.array(window) }).openapi("DebounceCancelResult");

export const accepted = z.object({ key: z.string().nullable(), window: window }).openapi("DebounceAccepted");

export const debounceStatus = z
  .object({
    open_windows: z.int(),
    events_received: z.int(),
    fired: z.int(),
    cancelled: z.int(),
    next_fire_at: z.string().nullable(),
  })
  .openapi("DebounceStatus");
