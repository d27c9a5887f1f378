/** Request and response shapes of wakeups: one HTTP call at a set time, signed and retried. */
import { z } from "@hono/zod-openapi";
import { requestFields } from "../outbound";
import { rfc3339 } from "../../../openapi/schemas";

const when = {
  at: rfc3339.optional().describe("When to call (RFC 3339); a time in the past means now."),
  delay_seconds: z.int().min(0).max(366 * 86400).optional().describe("Or: how long from now."),
};

const exactlyOneTime = (v: { at?: string; delay_seconds?: number }) => (v.at === undefined) !== (v.delay_seconds === undefined);
const TIME_MESSAGE = { message: "give exactly one of at and delay_seconds", path: ["at"] };

export const wakeupConfig = z
  .object({
    ...requestFields,
    ...when,
  })
  .refine(exactlyOneTime, TIME_MESSAGE);

export type WakeupConfig = z.infer<typeof wakeupConfig>;

export const rescheduleInput = z.object(when).refine(exactlyOneTime, TIME_MESSAGE);

export const wakeupStatus = z
  .object({
    status: z.enum(["scheduled", "firing", "delivered", "failed"]).describe("scheduled → firing → delivered, or failed once the retries ran out or the receiver aborted."),
    fire_at: z.string(),
    fired_at: z.string().nullable(),
    delivery_id: z.string().nullable().describe("The call's id in GET /v1/wakeups/{id}/deliveries (and its webhook-id)."),
    url: z.string(),
    method: z.string(),
  })
  .openapi("WakeupStatus");
