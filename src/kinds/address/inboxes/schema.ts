/**
 * Request and response shapes of inboxes: a buffered webhook inbox (Hookdeck, Svix Ingest). What
 * arrives at the public address is kept in arrival order, byte-exact, with its method, path, query,
 * headers and client address; the agent pulls (cursor, long-poll) and acks. The same schemas
 * validate, type and document.
 */
import { z } from "@hono/zod-openapi";
import { exactlyOneOf, pageLimit, seqCursor, singleLine } from "../../../openapi/schemas";
import { MAX_PUBLIC_BODY_BYTES } from "../../../resources/public-face";
import { captureFields } from "../captures/schema";
import { MAX_PAGE_BODY_BYTES } from "../captures/store";

/** Items one inbox keeps, pending and acked (acked ones stay, for the export, until the inbox ends). */
export const MAX_ITEMS = 10_000;
/** Bytes of bodies one inbox keeps, in all. */
export const MAX_BYTES = 1024 * 1024 * 1024;
/** One request's body: larger is 413, nothing stored. */
export const MAX_ITEM_BYTES = MAX_PUBLIC_BODY_BYTES;
/** Items per pull and per ack. */
export const MAX_BATCH = 100;
/** How far a signed timestamp may be from now (Stripe's default; Slack and Standard Webhooks say five minutes). */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

export const PROVIDERS = ["stripe", "github", "slack", "standard-webhooks", "shopify"] as const;
export type Provider = (typeof PROVIDERS)[number];

const verifyCommon = {
  provider: z.enum(PROVIDERS).describe(
    "Whose signature each request must carry: `stripe` (Stripe-Signature `t=…,v1=…`), `github` (X-Hub-Signature-256), " +
      "`slack` (X-Slack-Signature with X-Slack-Request-Timestamp), `standard-webhooks` (webhook-id, webhook-timestamp, webhook-signature), " +
      `\`shopify\` (X-Shopify-Hmac-Sha256). Signed timestamps must be within ${SIGNATURE_TOLERANCE_SECONDS} s of the arrival.`,
  ),
  reject_unverified: z.boolean().default(false).describe("Refuse a request whose signature does not verify with 401, storing nothing (default: keep it, marked `verified: false`)."),
};

export const verifyCreate = z
  .object({
    ...verifyCommon,
    secret: singleLine(512).min(1).describe("The signing secret the provider shows you (Stripe's and Standard Webhooks' `whsec_…`). Stored sealed, never shown back."),
  })
  .strict();

export const inboxCreate = z.object({
  verify: verifyCreate.nullable().default(null).describe("Check each request's signature (optional)."),
});
export type InboxCreate = z.infer<typeof inboxCreate>;

/** The config as the record shows it and the object keeps it: the secret is sealed apart. */
export type InboxConfig = { verify: { provider: Provider; reject_unverified: boolean } | null };

export const item = z
  .object({
    ...captureFields,
    seq: z.int().describe("Arrival order, from 1: the pull's cursor, and the item's id."),
    verified: z.boolean().nullable().describe("Whether the signature verified; null when the inbox checks none."),
    verification_error: z.string().nullable().describe("Why it did not."),
    acked_at: z.string().nullable(),
  })
  .openapi("InboxItem");
export type Item = z.infer<typeof item>;

export const pullInput = z.object({
  cursor: seqCursor.describe("Items after this seq (a previous pull's next_cursor); from the first pending one when absent."),
  limit: pageLimit(20),
  wait_seconds: z.coerce.number().int().min(0).max(30).default(0).describe("Long-poll: when nothing is pending after the cursor, wait up to this long for a request to arrive."),
});

export const pullResult = z.object({
  items: z.array(item).describe(`Pending (unacked) items in arrival order; a page stops early past ${MAX_PAGE_BODY_BYTES} bytes of bodies.`),
  next_cursor: z.string().nullable().describe("Pass as cursor to go on: the last item's seq, or the cursor given when none came (null only then without one)."),
});

export const ackInput = exactlyOneOf(
  z.object({
    seqs: z.array(z.int().min(1)).min(1).max(MAX_BATCH).optional().describe(`Ack these items (at most ${MAX_BATCH}).`),
    through: z.int().min(1).optional().describe("Ack every item up to and including this seq."),
  }),
  ["seqs", "through"],
);

export const ackResult = z.object({
  acked: z.int().describe("Items this call acked (ones acked before are not counted again)."),
  pending: z.int().describe("Items still pending."),
});

export const inboxInfo = z.object({
  pending: z.int(),
  acked: z.int(),
  bytes: z.int(),
  last_seq: z.int().describe("The seq of the latest item (0 while empty)."),
  verify: z.object({ provider: z.enum(PROVIDERS), reject_unverified: z.boolean() }).nullable(),
});
