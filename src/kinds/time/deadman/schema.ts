/** Request and response shapes of deadman: a dead-man switch pinged by a job, alerting when the pings stop. */
import { z } from "@hono/zod-openapi";
import { requestFields } from "../../../delivery/outbound";
import { notifyTarget } from "../../address/notify/people";
import { pageLimit, seqCursor, pageOf, atMostOneOf } from "../../../openapi/schemas";

export const MIN_PERIOD_SECONDS = 60;
export const MAX_PERIOD_SECONDS = 31 * 86400;
/** Pings kept in the log; the oldest are forgotten beyond this. */
export const MAX_PINGS_KEPT = 1000;
/** Bytes of a ping's body kept in the log (the rest is cut; its full size is recorded). */
export const PING_EXCERPT_BYTES = 1024;
/** The sealed payload, as JSON text: it travels in one outbound request, whose body must stay under 64 KiB. */
export const MAX_PAYLOAD_BYTES = 32 * 1024;

export const SIGNALS = ["success", "start", "fail", "log"] as const;
export type Signal = (typeof SIGNALS)[number];
export const STATES = ["new", "up", "late", "down", "paused"] as const;
export type SwitchState = (typeof STATES)[number];

export const deadmanConfig = z.object({
  period_seconds: z.int().min(MIN_PERIOD_SECONDS).max(MAX_PERIOD_SECONDS).describe("Expected time between pings."),
  grace_seconds: z
    .int()
    .min(0)
    .max(MAX_PERIOD_SECONDS)
    .default(300)
    .describe("How long past the period a ping may still come before the run counts as missed."),
  alert_after_misses: z
    .int()
    .min(1)
    .max(100)
    .default(1)
    .describe("Consecutive missed runs (or failure pings) before the switch goes down and alerts."),
  realert_seconds: z
    .int()
    .min(MIN_PERIOD_SECONDS)
    .max(MAX_PERIOD_SECONDS)
    .nullable()
    .default(null)
    .describe("While down, repeat the alert this often; null alerts once."),
  notify_late: z
    .boolean()
    .default(false)
    .describe("Also send deadman.late when a ping is overdue (before the grace runs out)."),
  alert_url: requestFields.url
    .nullable()
    .default(null)
    .describe(
      "Receives deadman.down, deadman.up (and deadman.late) events, signed with the resource's " +
        "signing_secret. Give this, alert_notify, or both (with neither, the switch is watched through its " +
        "status only).",
    ),
  alert_notify: notifyTarget("the down, up (and late) alerts, as messages to people,"),
  alert_headers: requestFields.headers.describe("Sent with every alert."),
  successor_url: requestFields.url
    .nullable()
    .default(null)
    .describe(
      "Receives the sealed payload (POST /payload), once, when the switch goes down. Without it, a payload " +
        "is refused (409).",
    ),
});

export type DeadmanConfig = z.infer<typeof deadmanConfig>;

export const pingInput = atMostOneOf(
  z.object({
    signal: z
      .enum(SIGNALS)
      .optional()
      .describe("success (default), start (times the run), fail, or log (recorded only). Not with exit_code."),
    exit_code: z.int().min(0).max(255).optional().describe("Instead of signal: 0 is success, anything else a failure."),
    message: z
      .string()
      .max(10_000)
      .optional()
      .describe(`Kept in the ping log (its first ${PING_EXCERPT_BYTES} bytes).`),
  }),
  ["signal", "exit_code"],
);

export const payloadInput = z.object({
  payload: z
    .union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())])
    .describe(
      `Up to ${MAX_PAYLOAD_BYTES} bytes as JSON. Sealed at once; it cannot be read back, only released or cleared.`,
    ),
});

export const pingsInput = z.object({ limit: pageLimit(), cursor: seqCursor });

const isoOrNull = z.string().nullable();
const textOrNull = z.string().nullable();

export const payloadState = z
  .object({
    held: z.boolean().describe("A sealed payload waits to be released."),
    bytes: z.int().nullable(),
    set_at: isoOrNull,
    released_at: isoOrNull.describe("When the last payload went to successor_url."),
    release_delivery_id: textOrNull.describe("That request's id in GET /v1/deadman/{id}/deliveries."),
    release_error: textOrNull.describe("Why the last payload could not be released (it is then dropped)."),
  })
  .openapi("DeadmanPayload");

export const deadmanStatus = z
  .object({
    state: z
      .enum(STATES)
      .describe(
        "new (never pinged) → up → late (overdue or failing, not yet alerted) → down (alerted) → up; " +
          "paused until the next ping.",
      ),
    last_ping_at: isoOrNull,
    last_signal: z.enum(SIGNALS).nullable(),
    last_success_at: isoOrNull,
    last_duration_seconds: z
      .number()
      .nullable()
      .describe("From the last /start to the success or failure that followed it."),
    running_since: isoOrNull.describe("A /start not yet followed by success or failure."),
    next_due_at: isoOrNull.describe("When the next ping is due; after that the switch is late."),
    alert_at: isoOrNull.describe("When it goes down if no success ping comes first."),
    misses: z.int().describe("Consecutive missed runs and failure pings since the last success."),
    down_since: isoOrNull,
    alerts_sent: z.int().describe("deadman.down alerts sent since it went down (repeats included)."),
    pings: z.int(),
    payload: payloadState,
  })
  .openapi("DeadmanStatus");

export const ping = z
  .object({
    seq: z.int(),
    at: z.string(),
    signal: z.enum(SIGNALS),
    exit_code: z.int().nullable(),
    source: z.enum(["public", "api"]),
    method: z.string(),
    body: z.string().nullable().describe(`The first ${PING_EXCERPT_BYTES} bytes of the ping's body.`),
    body_bytes: z.int(),
    duration_seconds: z.number().nullable(),
  })
  .openapi("DeadmanPing");

export const pingPage = pageOf(ping).openapi("DeadmanPingPage");
