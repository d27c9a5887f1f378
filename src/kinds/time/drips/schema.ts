/** Request and response shapes of drips: a queue released to one target at a rate, with bounded parallelism. */
import { z } from "@hono/zod-openapi";
import { requestFields } from "../../../delivery/outbound";
import { atLeastOneOf, atMostOneOf, pageLimit, seqCursor, pageOf } from "../../../openapi/schemas";

/** Messages per batch call (the whole JSON body is limited to 1 MiB as well). */
export const MAX_BATCH = 100;
/** Unfinished messages (pending and in flight) a drip holds at once. */
export const MAX_BACKLOG = 10_000;
/**
 * Bytes (bodies and headers) of unfinished messages: with the finished ones kept, an export stays well under the 32 MiB
 * an RPC carries.
 */
export const MAX_BACKLOG_BYTES = 8 * 1024 * 1024;
/**
 * Finished messages (delivered, failed, cancelled) kept for listing and export; the oldest are forgotten beyond these.
 */
export const MAX_KEPT = 10_000;
export const MAX_KEPT_BYTES = 8 * 1024 * 1024;
export const MAX_RATE_COUNT = 1000;
export const MAX_PARALLEL = 100;
export const MAX_PERIOD_SECONDS = 86400;

export const STATUSES = ["pending", "in_flight", "delivered", "failed", "cancelled"] as const;
export type MessageStatus = (typeof STATUSES)[number];

const rate = z
  .strictObject({
    count: z.int().min(1).max(MAX_RATE_COUNT).describe("Releases allowed per period."),
    period_seconds: z.int().min(1).max(MAX_PERIOD_SECONDS),
  })
  .describe(
    "Sliding window: in any span of period_seconds at most `count` messages are released (a release is a " +
      "message's first attempt; its retries stay within max_parallel instead). For evenly spaced calls use " +
      "count 1 and period_seconds = the spacing.",
  );

const maxParallel = z
  .int()
  .min(1)
  .max(MAX_PARALLEL)
  .describe(
    "Deliveries in flight at once. A delivery stays in flight through its retries, until it is delivered, " +
      "aborted or dead.",
  );

export const dripConfig = z.object({
  url: requestFields.url,
  method: requestFields.method,
  headers: requestFields.headers.describe("Sent with every message (a message's own headers override them)."),
  rate,
  max_parallel: maxParallel.default(10),
  paused: z.boolean().default(false).describe("Start paused: messages queue up and nothing is released until resume."),
});

export type DripConfig = z.infer<typeof dripConfig>;

const messageFields = {
  body: requestFields.body,
  headers: requestFields.headers.describe("Added to the drip's headers for this message."),
  dedup_id: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe(
      "While the drip holds a message with this dedup_id (cancelled ones aside), enqueueing another " +
        "returns that one instead.",
    ),
};

export const enqueueInput = z.object(messageFields);
export type EnqueueInput = z.infer<typeof enqueueInput>;

export const batchInput = z.object({
  messages: z
    .array(z.strictObject(messageFields))
    .min(1)
    .max(MAX_BATCH)
    .describe(`1 to ${MAX_BATCH} messages, queued in this order, all or none.`),
});

export const messageIdField = z.string().regex(/^msg_[0-9a-f]{32}$/, "must be a message_id (msg_ and 32 hex digits)");

export const message = z
  .object({
    message_id: z.string(),
    dedup_id: z.string().nullable(),
    status: z
      .enum(STATUSES)
      .describe(
        "pending → in_flight → delivered, or failed (aborted by the receiver or dead after its retries); " +
          "or cancelled while pending.",
      ),
    bytes: z.int().describe("Size of its body and headers."),
    delivery_id: z
      .string()
      .nullable()
      .describe("Its id in GET /v1/drips/{id}/deliveries (and its webhook-id), once released."),
    created_at: z.string(),
    released_at: z.string().nullable(),
    finished_at: z.string().nullable(),
    deduplicated: z
      .boolean()
      .optional()
      .describe("true when an earlier message with this dedup_id was returned instead."),
  })
  .openapi("DripMessage");

export const messageDetail = message
  .extend({ body: z.string().nullable().describe("Exactly as it is sent."), headers: z.record(z.string(), z.string()) })
  .openapi("DripMessageDetail");

export const batchResult = z
  .object({ items: z.array(message), enqueued: z.int().describe("New messages (the rest were deduplicated).") })
  .openapi("DripBatchResult");

export const listInput = z.object({ status: z.enum(STATUSES).optional(), limit: pageLimit(), cursor: seqCursor });

export const messagePage = pageOf(message).openapi("DripMessagePage");

export const messageInput = z.object({ message_id: messageIdField });

export const releaseInput = atMostOneOf(
  z.object({
    count: z.int().min(1).max(MAX_BATCH).optional().describe("How many of the oldest pending messages (default 1)."),
    message_id: messageIdField.optional().describe("Or: this pending message, ahead of its turn."),
  }),
  ["count", "message_id"],
);

export const releaseResult = z.object({ released: z.array(message) }).openapi("DripReleaseResult");

export const limitsInput = atLeastOneOf(z.object({ rate: rate.optional(), max_parallel: maxParallel.optional() }), [
  "rate",
  "max_parallel",
]);

export const purgeResult = z.object({ cancelled: z.int() }).openapi("DripPurgeResult");

export const dripStatus = z
  .object({
    paused: z.boolean(),
    pending: z.int(),
    in_flight: z.int(),
    rate: z
      .object({ count: z.int(), period_seconds: z.int() })
      .describe("In force now (create's value, or the last POST /limits)."),
    max_parallel: z.int(),
    released_in_window: z.int().describe("Releases within the last period_seconds."),
    held_by: z
      .enum(["paused", "max_parallel", "rate"])
      .nullable()
      .describe("What keeps pending messages back; null when nothing is pending or they are being released now."),
    next_release_at: z
      .string()
      .nullable()
      .describe("When the next message goes out; null when nothing is pending, paused, or every slot is in flight."),
  })
  .openapi("DripStatus");
