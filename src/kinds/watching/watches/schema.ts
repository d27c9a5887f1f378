/**
 * Request and response shapes of watches. The create body is the watch (interval, thresholds,
 * where alerts go) with the check it makes in `check`, one of 13 types told apart by
 * `check.type` (check-schema.ts). Every limit is in limits.ts.
 */
import { z } from "@hono/zod-openapi";
import {
  jsonValue,
  managementTokenOf,
  pageLimit,
  pageOf,
  rfc3339,
  seqCursor,
  singleLine,
} from "../../../openapi/schemas";
import { notifyTarget } from "../../address/notify/people";
import { check } from "./check-schema";
import { EXCERPT_CHARS, MAX_INTERVAL_SECONDS, MAX_TIMEOUT_MS, MIN_INTERVAL_SECONDS } from "./limits";

export const escalationTarget = managementTokenOf(
  ["escalations"],
  "must be an escalations resource's management token (zvm_…)",
)
  .nullable()
  .default(null)
  .describe(
    "An escalations resource's management token: down opens an incident there, up resolves it (only its id is kept).",
  );

export const watchConfig = z.object({
  check,
  interval_seconds: z
    .int()
    .min(MIN_INTERVAL_SECONDS)
    .max(MAX_INTERVAL_SECONDS)
    .default(300)
    .describe(`Seconds between checks (${MIN_INTERVAL_SECONDS}–${MAX_INTERVAL_SECONDS}); the first is made at once.`),
  timeout_ms: z
    .int()
    .min(1000)
    .max(MAX_TIMEOUT_MS)
    .default(10_000)
    .describe("A check not answered within this long fails."),
  alert_after: z.int().min(1).max(100).default(1).describe("Consecutive failed checks before watch.down."),
  recover_after: z.int().min(1).max(100).default(1).describe("Consecutive good checks before watch.up."),
  realert_seconds: z
    .int()
    .min(MIN_INTERVAL_SECONDS)
    .max(7 * 86400)
    .nullable()
    .default(null)
    .describe("While down, watch.down is sent again this often (null: once)."),
  paused: z.boolean().default(false).describe("Start paused."),
  alert_notify: notifyTarget("down, up and changed alerts"),
  escalation: escalationTarget,
});
export type WatchConfig = z.infer<typeof watchConfig>;

export const STATES = ["pending", "up", "down", "paused"] as const;
export type WatchState = (typeof STATES)[number];

export const checkResult = z
  .object({
    seq: z.int(),
    at: rfc3339,
    scheduled_at: rfc3339.nullable().describe("When it was due (null: asked for)."),
    ok: z.boolean(),
    status: z.int().nullable().describe("The HTTP status, or the DNS RCODE."),
    duration_ms: z.int().nullable(),
    error: z.string().nullable().describe("Why the check failed."),
    value: jsonValue.nullable().describe("What the check read."),
    changed: z.boolean(),
    excerpt: z.string().nullable().describe(`The answer's first ${EXCERPT_CHARS} characters.`),
  })
  .openapi("WatchCheck");

export const watchStatus = z
  .object({
    state: z.enum(STATES),
    check_type: z.string(),
    consecutive_failures: z.int(),
    consecutive_successes: z.int(),
    checks: z.int(),
    failures: z.int(),
    changes: z.int(),
    alerts_sent: z.int(),
    down_since: rfc3339.nullable(),
    last_check: checkResult.nullable(),
    next_check_at: rfc3339.nullable(),
    last_ping_at: rfc3339.nullable().describe("Heartbeat: the last ping."),
    followers: z.int().describe("Groups following it."),
  })
  .openapi("WatchStatus");

export const historyInput = z.object({
  limit: pageLimit(50),
  cursor: seqCursor,
  only: z.enum(["all", "failures", "changes"]).default("all"),
});
export const historyPage = pageOf(checkResult);

export const pingQuery = z.object({ message: singleLine(200).optional() });
