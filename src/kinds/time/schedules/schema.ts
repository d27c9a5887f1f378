/** Request and response shapes of schedules: a recurring cron call, in the caller's time zone. */
import { z } from "@hono/zod-openapi";
import { requestFields } from "../../../delivery/outbound";
import { cronExpression, cronProblem, validTimeZone } from "../cron";
import { pageLimit, seqCursor, rfc3339 } from "../../../openapi/schemas";

export const scheduleConfig = z
  .object({
    cron: cronExpression.describe(
      "Five fields: minute hour day-of-month month day-of-week (e.g. `*/15 9-17 * * 1-5`), read in " +
        "`timezone`; a 422 says why an expression is refused.",
    ),
    timezone: z
      .string()
      .max(64)
      .default("UTC")
      .describe("IANA time zone the cron fields are read in (e.g. `Europe/Berlin`): DST is followed."),
    ...requestFields,
    start_at: rfc3339.optional().describe("No call before this time (RFC 3339; a time in the past changes nothing)."),
    end_at: rfc3339
      .optional()
      .describe("No call from this time on (RFC 3339, after start_at). The resource's expiry ends the calls too."),
    jitter_seconds: z
      .int()
      .min(0)
      .max(3600)
      .default(0)
      .describe("Each call is delayed by a random 0..jitter_seconds, to spread load."),
    overlap: z
      .enum(["skip", "allow"])
      .default("skip")
      .describe(
        "When a tick comes while the previous call is still being delivered: skip it (recorded in history) " +
          "or send anyway.",
      ),
  })
  .superRefine((c, ctx) => {
    if (!validTimeZone(c.timezone)) {
      ctx.addIssue({ code: "custom", path: ["timezone"], message: "is not an IANA time zone" });
      return;
    }
    const problem = cronProblem(c.cron, c.timezone);
    if (problem) ctx.addIssue({ code: "custom", path: ["cron"], message: problem });
    if (c.start_at && c.end_at && Date.parse(c.end_at) <= Date.parse(c.start_at))
      ctx.addIssue({ code: "custom", path: ["end_at"], message: "must be after start_at" });
  });

export type ScheduleConfig = z.infer<typeof scheduleConfig>;

export const previewInput = z.object({
  count: z.coerce.number().int().min(1).max(50).default(5).describe("How many fire times (1–50, default 5)."),
});

export const historyInput = z.object({ limit: pageLimit(), cursor: seqCursor });

export const scheduleStatus = z
  .object({
    cron: z.string(),
    timezone: z.string(),
    paused: z.boolean(),
    next_run_at: z
      .string()
      .nullable()
      .describe("When the next call goes out (jitter included); null when paused or none is left."),
    runs: z.int(),
    last_fired_at: z.string().nullable(),
    in_flight: z.string().nullable().describe("Delivery id of a call still being delivered."),
  })
  .openapi("ScheduleStatus");

export const preview = z
  .object({
    times: z.array(
      z.object({ at: z.string(), local: z.string().describe("The same moment in the schedule's time zone.") }),
    ),
  })
  .openapi("SchedulePreview");

export const history = z
  .object({
    items: z.array(
      z.object({
        seq: z.int(),
        scheduled_for: z.string(),
        fired_at: z.string().nullable(),
        delivery_id: z.string().nullable(),
        outcome: z.enum(["sent", "skipped", "delivered", "failed"]),
        manual: z.boolean(),
      }),
    ),
    next_cursor: z.string().nullable(),
  })
  .openapi("ScheduleHistory");
