/** Request and response shapes of watch-groups. */
import { z } from "@hono/zod-openapi";
import { managementTokenOf, pageLimit, pageOf, rfc3339, seqCursor } from "../../../openapi/schemas";
import { notifyTarget } from "../../address/notify/people";
import { escalationTarget } from "../watches/schema";
import { SIGNAL_STATES } from "../signals";
import { alias, ALIAS_PATTERN, expression, MAX_CHILDREN, MAX_DEPTH } from "./expression";

export const groupConfig = z.object({
  children: z
    .record(
      alias,
      managementTokenOf(["watches", "watch-groups"], "must be a watch's or group's management token (zvm_…)"),
    )
    .refine((c) => Object.keys(c).length >= 1 && Object.keys(c).length <= MAX_CHILDREN, `1 to ${MAX_CHILDREN} children`)
    // The refinement's bounds and the aliases' form, in the schema too (a record publishes neither).
    .meta({
      minProperties: 1,
      maxProperties: MAX_CHILDREN,
      propertyNames: { type: "string", pattern: ALIAS_PATTERN.source },
    })
    .describe(
      `The watches and groups combined, by the alias the expression uses, each given by its management ` +
        `token (only its id is kept). 1–${MAX_CHILDREN}.`,
    ),
  expression: expression.describe(
    `When the group is down (nested at most ${MAX_DEPTH} deep). Paused or unheard children are unknown: ` +
      `three-valued logic, and an unknown result keeps the group's last alert state without an event.`,
  ),
  alert_notify: notifyTarget("group.down and group.up alerts"),
  escalation: escalationTarget,
});
export type GroupConfig = z.infer<typeof groupConfig>;

const state = z.enum(SIGNAL_STATES);

export const groupStatus = z
  .object({
    state,
    since: rfc3339,
    down_since: rfc3339.nullable(),
    transitions: z.int(),
    alerts_sent: z.int(),
    expression: expression,
    children: z.array(
      z.object({ alias: z.string(), id: z.string(), state, since: rfc3339.nullable(), reason: z.string().nullable() }),
    ),
  })
  .openapi("WatchGroupStatus");

export const transition = z
  .object({
    seq: z.int(),
    at: rfc3339,
    from: z.string(),
    to: z.string(),
    cause: z
      .object({ alias: z.string(), id: z.string(), state: z.string(), reason: z.string().nullable() })
      .nullable()
      .describe("The child whose news moved the group."),
    children: z.record(z.string(), z.string()).describe("Every child's state at that moment."),
  })
  .openapi("WatchGroupTransition");

export const transitionsInput = z.object({ limit: pageLimit(50), cursor: seqCursor });
export const transitionPage = pageOf(transition);
