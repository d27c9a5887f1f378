/**
 * Request and response shapes of queues: a work queue with leases (SQS,
 * Cloudflare Queues, beanstalkd). A message is visible, delayed, in flight
 * (leased) or dead; the same schemas validate, type and document.
 */
import { z } from "@hono/zod-openapi";
import { pageLimit, seqCursor, jsonValue, pageOf } from "../../../openapi/schemas";

/**
 * Messages one queue holds in every state (dead ones included), and bytes of their bodies (JSON) and dedup ids:
 * together they keep the export (every message, with its fields) below the 32 MiB of one Durable Object RPC answer.
 */
export const MAX_MESSAGES = 100_000;
export const MAX_QUEUE_BYTES = 4 * 1024 * 1024;
/** One message body, as JSON. */
export const MAX_MESSAGE_BYTES = 64 * 1024;
/** Messages per batch push, lease, batch ack and redrive by id. */
export const MAX_BATCH = 100;
export const MAX_VISIBILITY_SECONDS = 12 * 3600;
export const MAX_DELAY_SECONDS = 7 * 86400;
export const MAX_DEDUP_WINDOW_SECONDS = 86400;
export const MAX_PRIORITY = 1000;

export const STATES = ["visible", "delayed", "in_flight", "dead"] as const;
export type MessageState = (typeof STATES)[number];

const visibility = z.int().min(1).max(MAX_VISIBILITY_SECONDS);
const delay = z.int().min(0).max(MAX_DELAY_SECONDS);

export const queueConfig = z.object({
  visibility_seconds: visibility
    .default(30)
    .describe(
      `How long a lease hides a message unless the lease says otherwise (1–${MAX_VISIBILITY_SECONDS}, default 30).`,
    ),
  max_receive_count: z
    .int()
    .min(1)
    .max(1000)
    .nullable()
    .default(5)
    .describe(
      "A message leased this many times without an ack becomes a dead letter when its last lease lapses or " +
        "is nacked (default 5; null: never).",
    ),
  delay_seconds: delay.default(0).describe("Delay of every pushed message unless the push says otherwise (default 0)."),
  dedup_window_seconds: z
    .int()
    .min(1)
    .max(MAX_DEDUP_WINDOW_SECONDS)
    .default(300)
    .describe("A push whose dedup_id was pushed within this many seconds is not queued again (default 300)."),
});
export type QueueConfig = z.infer<typeof queueConfig>;

const messageFields = {
  body: jsonValue.describe(
    `Required. The message: any JSON value (null included), at most ${MAX_MESSAGE_BYTES} bytes as JSON (else 413).`,
  ),
  delay_seconds: delay
    .optional()
    .describe(`Stay invisible this long first (0–${MAX_DELAY_SECONDS}; default: the queue's delay_seconds).`),
  dedup_id: z
    .string()
    .min(1)
    .max(128)
    .optional()
    .describe(
      "Deduplication id: another push with the same id within the queue's dedup_window_seconds is not " +
        "queued; its answer names the first message.",
    ),
  priority: z
    .int()
    .min(0)
    .max(MAX_PRIORITY)
    .default(0)
    .describe(`0–${MAX_PRIORITY}; higher is leased first, equal priorities in push order.`),
};

const hasBody = (m: { body?: unknown }) => m.body !== undefined;
const bodyRequired = { message: "body is required (null is a value)", path: ["body"] };

export const pushInput = z.object(messageFields).refine(hasBody, bodyRequired);
export type PushInput = z.infer<typeof pushInput>;

export const batchInput = z.object({
  messages: z
    .array(z.strictObject(messageFields).refine(hasBody, bodyRequired))
    .min(1)
    .max(MAX_BATCH)
    .describe(`1 to ${MAX_BATCH} messages, all or none.`),
});

export const leaseInput = z.object({
  max_messages: z
    .int()
    .min(1)
    .max(MAX_BATCH)
    .default(1)
    .describe(`Lease up to this many visible messages (1–${MAX_BATCH}, default 1).`),
  visibility_seconds: visibility
    .optional()
    .describe("How long they stay hidden, held by this lease (default: the queue's visibility_seconds)."),
  wait_seconds: z
    .int()
    .min(0)
    .max(30)
    .default(0)
    .describe("Long-poll: when no message is visible, wait up to this long for one."),
});
export type LeaseInput = z.infer<typeof leaseInput>;

export const leaseIdField = z.string().regex(/^lease_[0-9a-f]{32}$/, "must be a lease_id (lease_ and 32 hex digits)");
export const messageIdField = z.string().regex(/^msg_[0-9a-f]{32}$/, "must be a message_id (msg_ and 32 hex digits)");

export const leaseParam = z.object({ lease_id: leaseIdField });
export const messageParam = z.object({ message_id: messageIdField });

export const nackInput = z.object({
  delay_seconds: delay.default(0).describe("Visible again after this long (default 0: at once)."),
});

export const extendInput = z.object({
  visibility_seconds: visibility.describe(
    "Hide the message this long from now (replaces the lease's deadline, as SQS ChangeMessageVisibility).",
  ),
});

export const ackBatchInput = z.object({ lease_ids: z.array(leaseIdField).min(1).max(MAX_BATCH) });

export const deadListInput = z.object({ limit: pageLimit(), cursor: seqCursor });

export const redriveInput = z
  .object({
    message_ids: z
      .array(messageIdField)
      .min(1)
      .max(MAX_BATCH)
      .optional()
      .describe("These dead letters. Give this or `all: true`."),
    all: z
      .boolean()
      .optional()
      .describe(`Or: every dead letter, oldest first, up to 1000 per call (\`remaining\` says how many are left).`),
  })
  .refine((v) => (v.message_ids === undefined) !== (v.all === undefined || v.all === false), {
    message: "give message_ids or all: true",
    path: ["message_ids"],
  });

const at = z.string().describe("RFC 3339 UTC.");

export const message = z
  .object({
    message_id: z.string(),
    body: jsonValue,
    priority: z.int(),
    dedup_id: z.string().nullable(),
    state: z
      .enum(STATES)
      .describe(
        "visible: can be leased; delayed: not yet; in_flight: held by a lease; dead: a dead letter (see " +
          "max_receive_count).",
      ),
    receive_count: z.int().describe("Times leased (reset by a redrive)."),
    enqueued_at: at,
    visible_at: z
      .string()
      .nullable()
      .describe("delayed: when it becomes visible; in_flight: when its lease lapses; visible: since when; dead: null."),
    dead_at: z.string().nullable(),
  })
  .openapi("QueueMessage");

export const pushed = z
  .object({
    message_id: z.string(),
    duplicate: z
      .boolean()
      .describe(
        "true when the dedup_id was seen within the window: nothing was queued, message_id names the first message.",
      ),
    state: z
      .enum(STATES)
      .nullable()
      .describe("The message's state; null for a duplicate whose first message was acked or deleted since."),
    visible_at: z.string().nullable(),
  })
  .openapi("QueuePushed");

export const batchResult = z
  .object({ items: z.array(pushed), queued: z.int().describe("New messages (the rest were duplicates).") })
  .openapi("QueueBatchResult");

export const leased = z
  .object({
    message_id: z.string(),
    lease_id: z
      .string()
      .describe(
        "Ack, nack or extend with this id. It is valid until lease_expires_at (or the next extend's " +
          "deadline); afterwards the message may be leased by another consumer and this id is refused with " +
          "409.",
      ),
    body: jsonValue,
    priority: z.int(),
    dedup_id: z.string().nullable(),
    receive_count: z.int().describe("Including this lease."),
    enqueued_at: at,
    lease_expires_at: at,
  })
  .openapi("QueueLeased");

export const leaseResult = z.object({ items: z.array(leased) }).openapi("QueueLeaseResult");

export const acked = z.object({ message_id: z.string(), acked: z.literal(true) }).openapi("QueueAcked");

export const ackBatchResult = z
  .object({
    acked: z.array(z.string()).describe("Message ids acked (deleted)."),
    lost: z
      .array(z.string())
      .describe(
        "Lease ids no longer held (lapsed, acked, nacked or unknown): their messages were not acked by this call.",
      ),
  })
  .openapi("QueueAckBatchResult");

export const nacked = z
  .object({ message_id: z.string(), state: z.enum(STATES), visible_at: z.string().nullable() })
  .openapi("QueueNacked");

export const extended = z
  .object({ message_id: z.string(), lease_id: z.string(), lease_expires_at: at })
  .openapi("QueueExtended");

export const messagePage = pageOf(message).openapi("QueueMessagePage");

export const redriveResult = z
  .object({
    redriven: z.array(z.string()).describe("Message ids made visible again, with receive_count 0."),
    skipped: z.array(z.string()).describe("Given ids that are not dead letters of this queue."),
    remaining: z.int().describe("Dead letters left."),
  })
  .openapi("QueueRedriveResult");

export const deleted = z.object({ message_id: z.string(), deleted: z.literal(true) }).openapi("QueueDeleted");

export const queueStats = z
  .object({
    visible: z.int(),
    in_flight: z.int(),
    delayed: z.int(),
    dead: z.int(),
    messages: z.int().describe("All held, dead letters included."),
    bytes: z.int().describe(`Bodies (as JSON) and dedup ids held; at most ${MAX_QUEUE_BYTES}.`),
    oldest_age_seconds: z
      .int()
      .nullable()
      .describe("Age of the oldest message that is not a dead letter; null when there is none."),
    next_visible_at: z
      .string()
      .nullable()
      .describe("When the next delayed message appears or lease lapses; null when none is pending."),
  })
  .openapi("QueueStats");
