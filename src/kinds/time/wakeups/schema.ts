/** Request and response shapes of wakeups: one HTTP call at a set time, signed and retried. */
import { z } from "@hono/zod-openapi";
import { requestFields } from "../../../delivery/outbound";
import { exactlyOneOf, rfc3339 } from "../../../openapi/schemas";

const when = {
  at: rfc3339
    .optional()
    .describe(
      "When to call (RFC 3339), before the resource expires; a time in the past means now. Give this or delay_seconds.",
    ),
  delay_seconds: z
    .int()
    .min(0)
    .max(366 * 86400)
    .optional()
    .describe("Or: how long from now, in seconds (before the resource expires)."),
};

export const wakeupConfig = exactlyOneOf(z.object({ ...requestFields, ...when }), ["at", "delay_seconds"]);

export type WakeupConfig = z.infer<typeof wakeupConfig>;

export const rescheduleInput = exactlyOneOf(z.object(when), ["at", "delay_seconds"]);

export const wakeupStatus = z
  .object({
    status: z
      .enum(["scheduled", "firing", "delivered", "failed"])
      .describe("scheduled → firing → delivered, or failed once the retries ran out or the receiver aborted."),
    fire_at: z.string(),
    fired_at: z.string().nullable(),
    delivery_id: z
      .string()
      .nullable()
      .describe("The call's id in GET /v1/wakeups/{id}/deliveries (and its webhook-id)."),
    url: z.string(),
    method: z.string(),
  })
  .openapi("WakeupStatus");
