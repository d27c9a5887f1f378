/**
 * Request and response shapes of inboxes: a buffered webhook inbox (Hookdeck, Svix Ingest). What
 * arrives at the public address is kept in arrival order, byte-exact, with its method, path, query,
 * headers and client address; the agent pulls (cursor, long-poll) and acks. The same schemas
 * validate, type and document.
 */
import { z } from "@hono/zod-openapi";
import { singleLine } from "../../../openapi/schemas";
import { MAX_PUBLIC_BODY_BYTES } from "../../../kind/public-face";
import { PROVIDERS, SIGNATURE_TOLERANCE_SECONDS, type Provider } from "../captures/signatures";
import { pullCounts } from "../captures/pull";

/** Items one inbox keeps, pending and acked (acked ones stay, for the export, until the inbox ends). */
export const MAX_ITEMS = 10_000;
/** Bytes of bodies one inbox keeps, in all. */
export const MAX_BYTES = 1024 * 1024 * 1024;
/** One request's body: larger is 413, nothing stored. */
export const MAX_ITEM_BYTES = MAX_PUBLIC_BODY_BYTES;

const verifyCommon = {
  provider: z
    .enum(PROVIDERS)
    .describe(
      "Whose signature each request must carry: `stripe` (Stripe-Signature `t=…,v1=…`), `github` " +
        "(X-Hub-Signature-256), " +
        "`slack` (X-Slack-Signature with X-Slack-Request-Timestamp), `standard-webhooks` (webhook-id, " +
        "webhook-timestamp, webhook-signature), " +
        "`shopify` (X-Shopify-Hmac-Sha256), `twitch` (Twitch-Eventsub-Message-Signature, within 10 " +
        "minutes), `zoom` (x-zm-signature with x-zm-request-timestamp). " +
        `Other signed timestamps must be within ${SIGNATURE_TOLERANCE_SECONDS} s of the arrival.`,
    ),
  reject_unverified: z
    .boolean()
    .default(false)
    .describe(
      "Refuse a request whose signature does not verify with 401, storing nothing (default: keep it, " +
        "marked `verified: false`).",
    ),
};

export const verifyCreate = z
  .object({
    ...verifyCommon,
    secret: singleLine(512)
      .min(1)
      .describe(
        "The signing secret the provider shows you (Stripe's and Standard Webhooks' `whsec_…`). Stored " +
          "sealed, never shown back.",
      ),
  })
  .strict();

export const inboxCreate = z.object({
  verify: verifyCreate.nullable().default(null).describe("Check each request's signature (optional)."),
});
export type InboxCreate = z.infer<typeof inboxCreate>;

/** The config as the record shows it and the object keeps it: the secret is sealed apart. */
export type InboxConfig = { verify: { provider: Provider; reject_unverified: boolean } | null };

export const inboxInfo = z.object({
  ...pullCounts,
  verify: z.object({ provider: z.enum(PROVIDERS), reject_unverified: z.boolean() }).nullable(),
});
