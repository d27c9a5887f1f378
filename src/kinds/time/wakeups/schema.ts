/** Request and response shapes of wakeups: one HTTP call at a set time, signed and retried. */
import { z } from "@hono/zod-openapi";

/** Headers we set ourselves (signature, framing): a configured one must not replace them. */
const RESERVED_HEADERS = /^(host|content-length|transfer-encoding|connection|webhook-id|webhook-timestamp|webhook-signature)$/i;
/** Queue messages carry the request: its body stays well under their 128 KB. */
export const MAX_BODY_BYTES = 64 * 1024;

const when = {
  at: z.iso.datetime({ offset: true }).optional().describe("When to call (RFC 3339)."),
  delay_seconds: z.int().min(0).max(366 * 86400).optional().describe("Or: how long from now."),
};

const exactlyOneTime = (v: { at?: string; delay_seconds?: number }) => (v.at === undefined) !== (v.delay_seconds === undefined);
const TIME_MESSAGE = { message: "give exactly one of at and delay_seconds", path: ["at"] };

export const wakeupConfig = z
  .object({
    url: z.url({ protocol: /^https?$/ }).max(2048).describe("The endpoint to call."),
    method: z.enum(["GET", "POST", "PUT", "PATCH", "DELETE"]).default("POST"),
    headers: z
      .record(z.string().regex(/^[A-Za-z0-9-]{1,64}$/), z.string().max(4096))
      .default({})
      .refine((h) => Object.keys(h).length <= 32, "at most 32 headers")
      .refine((h) => !Object.keys(h).some((k) => RESERVED_HEADERS.test(k)), "host, framing and webhook-* headers are set by the service"),
    body: z
      .union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())])
      .optional()
      .describe("A string is sent as text/plain, anything else as JSON (unless headers set a content-type).")
      .refine((b) => b === undefined || new TextEncoder().encode(typeof b === "string" ? b : JSON.stringify(b)).length <= MAX_BODY_BYTES, `at most ${MAX_BODY_BYTES} bytes`),
    ...when,
  })
  .refine(exactlyOneTime, TIME_MESSAGE);

export type WakeupConfig = z.infer<typeof wakeupConfig>;

export const rescheduleInput = z.object(when).refine(exactlyOneTime, TIME_MESSAGE);

export const noInput = z.object({});

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
