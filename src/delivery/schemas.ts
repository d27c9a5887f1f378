/**
 * A delivery and its attempts as the API shows them: the resource's log (`/v1/{kind}/{id}/deliveries`) and the
 * deliveries kind.
 */
import { z } from "@hono/zod-openapi";
import { DELIVERY_RETENTION } from "./outbox-policy";
import { pageOf } from "../openapi/schemas";

const attempt = z.object({
  number: z.int(),
  at: z.string(),
  outcome: z.enum(["delivered", "failed", "aborted"]),
  status_code: z.int().nullable(),
  error: z.string().nullable(),
  duration_ms: z.int(),
  response_excerpt: z.string().nullable(),
});

export const delivery = z
  .object({
    id: z.string().describe("The event id, also sent as `webhook-id`."),
    event_type: z.string(),
    url: z.string(),
    method: z.string(),
    status: z.enum(["pending", "retrying", "delivered", "aborted", "dead"]),
    attempts: z.int().describe("Attempts made, across every send and retry."),
    sends: z
      .int()
      .describe(
        "How many times the delivery was put on the queue: more than 1 after a manual retry, or when the " +
          "service sent it again because the queue lost or refused it (at least once; the `webhook-id` " +
          "stays).",
      ),
    created_at: z.string(),
    updated_at: z.string(),
    settled_at: z
      .string()
      .nullable()
      .describe(
        "When it was delivered, aborted or declared dead; settled deliveries leave the log after the " +
          "retention in the price list's `deliveries` limits.",
      ),
    body: z
      .string()
      .nullable()
      .describe("What was sent: for lifecycle events, the event's JSON; null when withheld or stored."),
    body_withheld: z
      .boolean()
      .describe("The body is a secret (a dead-man switch's released payload): kept sealed, never shown."),
    body_stored: z
      .boolean()
      .describe("The body is a stored object (a large or binary body), sent by reference and not shown here."),
    retry_delays: z
      .array(z.int())
      .nullable()
      .describe("Its own retry schedule (seconds before each retry), when it has one; null: the default schedule."),
    attempt_log: z.array(attempt).describe(`The newest attempts (at most ${DELIVERY_RETENTION.attempts_kept}).`),
  })
  .openapi("Delivery");

export const deliveryPage = pageOf(delivery).openapi("DeliveryPage");
