/**
 * Request and response shapes of approvals: a human approval gate (Trigger.dev waitpoints,
 * HumanLayer). One request per resource, decided once on a hosted page, by whichever approver
 * link is used first, or by its timeout; the decision is a JWS anyone can verify.
 */
import { z } from "@hono/zod-openapi";
import { requestFields } from "../../../delivery/outbound";
import { singleLine } from "../../../openapi/schemas";
import { notifyTarget } from "../notify/people";

export const MAX_APPROVERS = 10;
export const MAX_DESCRIPTION_CHARS = 20_000;
export const MAX_COMMENT_CHARS = 2000;
export const MIN_TIMEOUT_SECONDS = 60;
/** The JWS `typ` of a decision record. */
export const DECISION_TYP = "approval-decision+jws";

export const STATES = ["pending", "approved", "denied", "expired"] as const;
export const OUTCOMES = ["approved", "denied"] as const;

const option = z
  .object({
    id: z
      .string()
      .regex(/^[a-z][a-z0-9_-]{0,31}$/, "must be 1–32 lower-case letters, digits, - or _ starting with a letter"),
    label: singleLine(60).min(1),
    outcome: z.enum(OUTCOMES).describe("What choosing it means: the request's state becomes this."),
  })
  .strict();

const approver = z
  .object({
    name: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9 ._@-]{0,63}$/, "must be 1–64 letters, digits, spaces or . _ @ -")
      .describe("Who the link is for; the decision record names it."),
    notify: notifyTarget("the request, with this approver's own link,").describe(
      "A notify resource's management token (zvm_…): the request, with this approver's own link, goes to " +
        "its channels. Only its id is kept.",
    ),
    url: requestFields.url
      .nullable()
      .default(null)
      .describe("Receives an approvals.requested event (signed) with this approver's own link."),
  })
  .strict();

export const approvalsCreate = z
  .object({
    title: singleLine(200).min(1).describe("What is asked, as the page's heading."),
    description: z
      .string()
      .max(MAX_DESCRIPTION_CHARS)
      .nullable()
      .default(null)
      .describe("Markdown, rendered safely on the page (raw HTML is shown as text; links only http(s) and mailto)."),
    options: z
      .array(option)
      .min(1)
      .max(6)
      .refine((o) => new Set(o.map((x) => x.id)).size === o.length, "option ids must be unique")
      .default([
        { id: "approve", label: "Approve", outcome: "approved" },
        { id: "deny", label: "Deny", outcome: "denied" },
      ])
      .describe("The buttons on the page, each approving or denying."),
    comment: z
      .enum(["none", "optional", "required"])
      .default("optional")
      .describe("Whether the page asks for a comment with the decision."),
    approvers: z
      .array(approver)
      .max(MAX_APPROVERS)
      .refine((a) => new Set(a.map((x) => x.name)).size === a.length, "approver names must be unique")
      .default([])
      .describe(
        "Named approvers, each with an unguessable link of their own (sent through `notify` or to `url`); " +
          'the resource\'s own public address decides too, as "owner-link".',
      ),
    timeout_seconds: z
      .int()
      .min(MIN_TIMEOUT_SECONDS)
      .default(86_400)
      .describe("Undecided this long after creation, the request expires (within the resource's TTL)."),
    default_on_expiry: z
      .string()
      .nullable()
      .default(null)
      .describe("The option whose outcome an expired request takes (its state is still `expired`); null: no outcome."),
    callback_url: requestFields.url
      .nullable()
      .default(null)
      .describe("Receives approvals.decided (signed) when it is decided or expires."),
  })
  .strict();
export type ApprovalsConfig = z.infer<typeof approvalsCreate>;

export const decisionPayload = z.object({
  iss: z.string(),
  approval_id: z.string().describe("The resource's id."),
  request_sha256: z.string().describe("SHA-256 of what was asked (title, description, options, creation time), hex."),
  state: z.enum(STATES),
  outcome: z.enum(OUTCOMES).nullable(),
  option: z.string().nullable(),
  comment: z.string().nullable(),
  decided_by: z
    .string()
    .describe("The approver whose link was used, `owner-link` for the resource's own address, or `timeout`."),
  decided_at: z.string(),
});
export type DecisionPayload = z.infer<typeof decisionPayload>;

export const approvalView = z.object({
  state: z.enum(STATES),
  outcome: z.enum(OUTCOMES).nullable(),
  title: z.string(),
  request_sha256: z.string(),
  decide_by: z.string().describe("When it expires if undecided."),
  decision: decisionPayload.nullable(),
  jws: z
    .string()
    .nullable()
    .describe(
      `The decision record: a compact JWS (typ ${DECISION_TYP}) over \`decision\`, verifiable against ` +
        `/.well-known/jwks.json.`,
    ),
  links: z
    .array(z.object({ approver: z.string(), url: z.string() }))
    .describe("Each approver's link (the owner's is the resource's public address)."),
});

export const getInput = z.object({
  wait_seconds: z.coerce
    .number()
    .int()
    .min(0)
    .max(30)
    .default(0)
    .describe("Wait up to this long for a decision (long-poll)."),
});
