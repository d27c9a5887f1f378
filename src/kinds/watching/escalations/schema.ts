/** Request and response shapes of escalations: a policy of steps, and the incidents it escalates. */
import { z } from "@hono/zod-openapi";
import {
  httpUrl,
  managementTokenOf,
  pageLimit,
  pageOf,
  rfc3339,
  seqCursor,
  singleLine,
} from "../../../openapi/schemas";

export const MAX_STEPS = 10;
export const MAX_TARGETS = 10;
export const MAX_REPEAT = 10;
export const MAX_OPEN_INCIDENTS = 100;
/** Incidents kept (the oldest closed ones go first). */
export const MAX_INCIDENTS = 1000;

const target = z.union([
  z.object({ url: httpUrl.describe("Receives the signed escalation.step event.") }).strict(),
  z
    .object({
      notify: managementTokenOf(["notify"], "must be a notify resource's management token (zvm_…)").describe(
        "A notify resource's management token: its people get the step as a message (only its id is kept).",
      ),
    })
    .strict(),
]);

export const escalationConfig = z.object({
  steps: z
    .array(
      z
        .object({
          delay_seconds: z
            .int()
            .min(0)
            .max(86400)
            .describe("Seconds after the previous step (the first: after the incident opened)."),
          targets: z.array(target).min(1).max(MAX_TARGETS),
        })
        .strict(),
    )
    .min(1)
    .max(MAX_STEPS)
    .describe(`1–${MAX_STEPS} steps, each reaching its targets until someone acknowledges.`),
  repeat: z
    .int()
    .min(0)
    .max(MAX_REPEAT)
    .default(0)
    .describe(
      "How many more times the whole chain runs after its last step (its first step's delay counted from " +
        "that last step).",
    ),
});
export type EscalationConfig = z.infer<typeof escalationConfig>;
/** As kept: notify targets by id. */
export type Target = { url: string } | { notify: string };

export const INCIDENT_STATES = ["open", "acknowledged", "resolved"] as const;

export const triggerInput = z.object({
  title: singleLine(250).min(1),
  details: z.string().max(2000).default(""),
  key: singleLine(200)
    .min(1)
    .optional()
    .describe("Deduplication: while an incident with this key is open or acknowledged, the same one is answered."),
});

export const ackInput = z.object({
  by: singleLine(100).min(1).default("api").describe("Who acknowledges (shown in the timeline)."),
});
export const resolveInput = z.object({ by: singleLine(100).min(1).default("api") });
export const incidentParams = z.object({
  incident_id: z.string().regex(/^inc_[0-9a-f]{32}$/, "must be an incident id (inc_…)"),
});

export const timelineEntry = z.object({
  at: rfc3339,
  event: z.enum(["triggered", "step", "acknowledged", "resolved", "exhausted"]),
  step: z.int().nullable(),
  round: z.int().nullable(),
  by: z.string().nullable(),
  targets: z.array(z.string()).nullable().describe("Where a step went (URLs, notify resource ids)."),
});

export const incident = z
  .object({
    incident_id: z.string(),
    key: z.string(),
    source: z.string().describe("`api`, or the watch or group that opened it."),
    title: z.string(),
    details: z.string(),
    state: z.enum(INCIDENT_STATES),
    opened_at: rfc3339,
    next_step_at: rfc3339.nullable(),
    steps_sent: z.int(),
    ack_url: z.string().describe("A page a person opens to acknowledge."),
    acknowledged_at: rfc3339.nullable(),
    acknowledged_by: z.string().nullable(),
    resolved_at: rfc3339.nullable(),
    resolved_by: z.string().nullable(),
    timeline: z.array(timelineEntry),
  })
  .openapi("Incident");

export const listInput = z.object({
  limit: pageLimit(20),
  cursor: seqCursor,
  state: z.enum([...INCIDENT_STATES, "all"]).default("all"),
});
export const incidentPage = pageOf(incident);
