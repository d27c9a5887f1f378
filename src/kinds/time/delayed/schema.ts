/** Request and response shapes of delayed: a channel to one target, taking messages to deliver later. */
import { z } from "@hono/zod-openapi";
import { requestFields } from "../../../delivery/outbound";
import { exactlyOneOf, pageLimit, seqCursor, pageOf, rfc3339 } from "../../../openapi/schemas";

export const MAX_PENDING = 10_000;

export const channelConfig = z.object({
  url: requestFields.url,
  method: requestFields.method,
  headers: requestFields.headers.describe("Sent with every message (a message's own headers are added)."),
});

export type ChannelConfig = z.infer<typeof channelConfig>;

export const publishInput = exactlyOneOf(
  z.object({
    body: requestFields.body,
    headers: requestFields.headers.describe("Added to the channel's headers for this message."),
    delay_seconds: z
      .int()
      .min(0)
      .max(366 * 86400)
      .optional()
      .describe("Deliver this many seconds from now (before the channel expires). Give this or deliver_at."),
    deliver_at: rfc3339
      .optional()
      .describe("When to deliver (RFC 3339, before the channel expires); a time in the past means now."),
    dedup_id: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe("A second message with the same dedup_id is not queued again: the first one is returned."),
  }),
  ["deliver_at", "delay_seconds"],
);

export const message = z
  .object({
    message_id: z.string(),
    dedup_id: z.string().nullable(),
    deliver_at: z.string(),
    status: z.enum(["pending", "sent", "delivered", "failed", "cancelled"]),
    delivery_id: z.string().nullable().describe("Its id in GET /v1/delayed/{id}/deliveries, once sent."),
    created_at: z.string(),
    deduplicated: z
      .boolean()
      .optional()
      .describe("true when an earlier message with this dedup_id was returned instead."),
  })
  .openapi("DelayedMessage");

export const listInput = z.object({
  status: z.enum(["pending", "sent", "delivered", "failed", "cancelled"]).optional(),
  limit: pageLimit(),
  cursor: seqCursor,
});

export const messagePage = pageOf(message).openapi("DelayedMessagePage");

export const cancelInput = z.object({
  message_id: z
    .string()
    .regex(/^msg_[0-9a-f]{32}$/, "must be a message_id (msg_ and 32 hex digits)")
    .describe("As publish returned it."),
});
