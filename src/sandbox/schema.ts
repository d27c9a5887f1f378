/**
 * The sandbox endpoints' bodies and answers (docs/api.md#sandboxes): validation, types and the OpenAPI document from
 * one place.
 */
import { z } from "@hono/zod-openapi";
import { exactlyOneOf, jsonValue, rfc3339, singleLine } from "../openapi/schemas";
import { MAX_ADVANCE_SECONDS, SANDBOX_MAX_TTL_SECONDS, SANDBOX_MIN_TTL_SECONDS } from "./limits";
import { SANDBOX_ID_PATTERN } from "./ids";

export const sandboxIdParam = z.object({
  id: z
    .string()
    .regex(SANDBOX_ID_PATTERN, "must be a sandbox id (sbx_…)")
    .openapi({ param: { name: "id", in: "path" }, example: "sbx_3kTMd9Qx2b7NcVfR5wZy1A" }),
});

export const createSandboxBody = z
  .object({
    label: singleLine(200)
      .nullable()
      .default(null)
      .describe("Your name for the sandbox (one line, at most 200 characters)."),
    ttl_seconds: z
      .int()
      .min(SANDBOX_MIN_TTL_SECONDS)
      .max(SANDBOX_MAX_TTL_SECONDS)
      .default(SANDBOX_MAX_TTL_SECONDS)
      .describe(
        `Real seconds the sandbox lives (${SANDBOX_MIN_TTL_SECONDS}–${SANDBOX_MAX_TTL_SECONDS}` +
          `); it ends then with every resource in it.`,
      ),
    deliveries: z
      .enum(["send", "log"])
      .default("send")
      .describe(
        "Where its resources' deliveries go: `send` to their targets (the egress guard applies), `log` " +
          "into the sandbox's delivery log instead (GET /v1/sandboxes/{id}/deliveries), nothing leaving the " +
          "service.",
      ),
  })
  .strict()
  .openapi("SandboxRequest");

export const clockBody = exactlyOneOf(
  z
    .object({
      advance_seconds: z
        .int()
        .min(1)
        .max(MAX_ADVANCE_SECONDS)
        .optional()
        .describe(`Simulated seconds to move forward (1–${MAX_ADVANCE_SECONDS}).`),
      to: rfc3339
        .optional()
        .describe("A simulated moment to move to: after the sandbox's now, at most the same span ahead."),
    })
    .strict(),
  ["advance_seconds", "to"],
).openapi("SandboxClockMove");

const sandboxEvent = z
  .object({
    at: z.string().describe("Simulated time (RFC 3339)."),
    resource_id: z.string().nullable(),
    kind: z.string().nullable(),
    type: z
      .string()
      .describe(
        "created · timer · delivery · attempt · logged · expired · cancelled · clock · " +
          "sandbox_created · sandbox_ended",
      ),
    detail: jsonValue,
  })
  .openapi("SandboxEvent");

export const sandboxView = z
  .object({
    id: z.string(),
    label: z.string().nullable(),
    deliveries: z.enum(["send", "log"]).describe("Where its resources' deliveries go: their targets, or its log."),
    state: z.enum(["active", "ended"]),
    created_at: z.string(),
    expires_at: z.string().describe("Real time: the sandbox ends then, with every resource in it."),
    now: z.string().describe("The sandbox's simulated now."),
    resources: z.array(z.object({ id: z.string(), kind: z.string() })),
    events: z.int().describe("Events in its timeline."),
  })
  .openapi("Sandbox");

export const createdSandbox = sandboxView
  .extend({
    credit_token: z
      .string()
      .describe(
        "zv_… — sandbox money, shown this once: " + "it pays only for this sandbox's resources, and only it does.",
      ),
    balance_usd: z.number(),
  })
  .openapi("CreatedSandbox");

export const clockAnswer = z
  .object({
    from: z.string(),
    to: z.string(),
    reached: z.string().describe("Where the clock stopped: `to`, or earlier when `more` is true."),
    more: z.boolean().describe("True when a limit of one call stopped the clock before `to`: call again to go on."),
    fired: z.array(sandboxEvent).describe("What fired, in the order it did."),
  })
  .openapi("SandboxClockResult");

export const timelineAnswer = z
  .object({ items: z.array(sandboxEvent), next_cursor: z.string().nullable() })
  .openapi("SandboxTimeline");

const loggedDelivery = z
  .object({
    seq: z.int().describe("Its number in the log."),
    at: z.string().describe("Simulated time (RFC 3339) the request was made."),
    resource_id: z.string(),
    delivery_id: z.string().describe("The delivery's webhook-id, as the resource's own delivery log shows it."),
    event_type: z.string(),
    method: z.string(),
    url: z.string().describe("Where it would have gone (a secret request's redacted address)."),
    headers: z
      .record(z.string(), z.string())
      .describe("As they would have been sent, signature included; values that may be secrets are masked."),
    body: z.string().nullable().describe("The text body, when short and not a secret; else null."),
    body_bytes: z.int().nullable(),
    body_sha256: z.string().nullable().describe("Hex SHA-256 of the body; null without a body or for a secret one."),
    body_withheld: z.boolean().describe("The body (or the whole request) is a secret: neither bytes nor digest kept."),
  })
  .openapi("SandboxLoggedDelivery");

export const deliveriesAnswer = z
  .object({ items: z.array(loggedDelivery), next_cursor: z.string().nullable() })
  .openapi("SandboxDeliveryLog");
