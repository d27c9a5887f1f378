/**
 * Request and response shapes of deliveries: guaranteed outbound delivery (Svix, Convoy). A
 * submitted request goes through the service's one delivery pipeline: signed, retried until a
 * 2xx on the default schedule or its own, dead after the last retry, retried again by hand.
 */
import { z } from "@hono/zod-openapi";
import { atMostOneOf, pageLimit, seqCursor, singleLine } from "../../../openapi/schemas";
import { requestFields } from "../../../delivery/outbound";
import { MAX_ATTEMPTS, MAX_RETRY_DELAY_SECONDS, RETRY_DELAYS_SECONDS } from "../../../delivery/schedule";
import { delivery } from "../../../delivery/schemas";

/** A submitted request's body (decoded). */
export const MAX_BODY_BYTES = 10 * 1024 * 1024;
/** The submit call's JSON, with a body at its largest in base64 (4/3) and the rest. */
export const MAX_SUBMIT_BYTES = Math.ceil((MAX_BODY_BYTES * 4) / 3) + 256 * 1024;
/** Submissions one resource keeps track of by idempotency key. */
export const MAX_KEYS = 100_000;

export const STATUSES = ["pending", "retrying", "delivered", "aborted", "dead"] as const;

const retryDelays = z.array(z.int().min(1).max(MAX_RETRY_DELAY_SECONDS)).max(MAX_ATTEMPTS - 1);
const DEFAULT_SCHEDULE = `${RETRY_DELAYS_SECONDS.join(", ")} (about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h)`;

export const deliveriesCreate = z
  .object({
    retry_delays: retryDelays
      .nullable()
      .default(null)
      .describe(
        `This resource's retry schedule: seconds before each retry (at most ${MAX_ATTEMPTS - 1}` +
          `, each at most ${MAX_RETRY_DELAY_SECONDS}); null: the service's, ${DEFAULT_SCHEDULE}.`,
      ),
  })
  .strict();
export type DeliveriesConfig = z.infer<typeof deliveriesCreate>;

export const submitInput = atMostOneOf(
  z
    .object({
      url: requestFields.url,
      method: requestFields.method,
      headers: requestFields.headers,
      body: z
        .union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())])
        .optional()
        .describe(
          `A string is sent as text/plain, anything else as JSON (unless headers set a content-type); at ` +
            `most ${MAX_BODY_BYTES} bytes.`,
        ),
      body_base64: z
        .base64()
        .optional()
        .describe(
          `Or the body as bytes, standard base64 (at most ${MAX_BODY_BYTES} bytes decoded; ` +
            `application/octet-stream unless headers say).`,
        ),
      idempotency_key: singleLine(200)
        .min(1)
        .optional()
        .describe(
          "Submitting the same key again (while the resource lives) sends nothing new: it answers the " +
            "first submission's delivery, or 409 when the request differs.",
        ),
      retry_delays: retryDelays
        .optional()
        .describe(
          "This request's own retry schedule (default: the resource's); dead after the last retry. `[]` tries once.",
        ),
    })
    .strict(),
  ["body", "body_base64"],
);
export type SubmitInput = z.infer<typeof submitInput>;

export const submitResult = z.object({
  delivery_id: z.string().describe("The delivery's id: its `webhook-id`, and its id in the attempt log."),
  duplicate: z.boolean().describe("The idempotency key was submitted before: nothing new was sent."),
  delivery: delivery,
});

export const deliveryIdParam = z.object({
  delivery_id: z
    .string()
    .regex(/^evt_[0-9a-f]{32}$/, "must be a delivery id (evt_…)")
    .describe("The delivery's id."),
});

export const listInput = z.object({
  status: z.enum(STATUSES).optional().describe("Only deliveries in this state (`dead`: the dead letters)."),
  cursor: seqCursor.describe("A previous page's next_cursor."),
  limit: pageLimit(20),
});

export const deliveriesInfo = z.object({
  counts: z
    .record(z.enum(STATUSES), z.int())
    .describe("Deliveries by state (settled ones leave after the log's retention)."),
  retry_delays: z.array(z.int()).describe("The resource's retry schedule, seconds before each retry."),
});
