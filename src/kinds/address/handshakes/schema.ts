/**
 * Request and response shapes of handshakes: a challenge responder (Hookdeck's verification
 * handling). The secrets the protocols need are given at create, sealed, never shown back; the
 * record names which are set. The same schemas validate, type and document.
 */
import { z } from "@hono/zod-openapi";
import { singleLine } from "../../../openapi/schemas";
import { MAX_PUBLIC_BODY_BYTES } from "../../../kind/public-face";
import { pullCounts } from "../captures/pull";

export const MAX_ITEMS = 10_000;
export const MAX_BYTES = 1024 * 1024 * 1024;
export const MAX_ITEM_BYTES = MAX_PUBLIC_BODY_BYTES;
/** Handshakes answered that the info keeps (the latest). */
export const HANDSHAKE_LOG = 100;

export const PROTOCOLS = ["slack", "meta", "graph", "twitter", "zoom", "twitch", "dropbox"] as const;
export type Protocol = (typeof PROTOCOLS)[number];

/** The create fields that hold a secret, and the protocol each serves. */
export const SECRET_FIELDS = {
  slack_signing_secret: "slack",
  meta_verify_token: "meta",
  twitter_consumer_secret: "twitter",
  zoom_secret_token: "zoom",
  twitch_secret: "twitch",
} as const satisfies Record<string, Protocol>;
export type SecretField = keyof typeof SECRET_FIELDS;
export type Secrets = Partial<Record<SecretField, string>>;

const secret = (what: string) => singleLine(512).min(1).optional().describe(`${what} Stored sealed, never shown back.`);

export const handshakesCreate = z
  .object({
    slack_signing_secret: secret(
      "Slack's Signing Secret: `url_verification` and buffered events must carry a valid X-Slack-Signature " +
        "(without it, the challenge is answered unchecked).",
    ),
    meta_verify_token: secret(
      "The Verify Token you typed into Meta's (Facebook, Instagram, WhatsApp) webhook settings: " +
        "`hub.verify_token` must equal it.",
    ),
    twitter_consumer_secret: secret("Your X (Twitter) app's consumer secret, which keys the CRC answer."),
    zoom_secret_token: secret("Your Zoom app's Secret Token, which keys `endpoint.url_validation` and x-zm-signature."),
    twitch_secret: secret(
      "The `secret` you gave Twitch when subscribing: the verification request's and every notification's " +
        "signature are checked with it.",
    ),
  })
  .strict();
export type HandshakesCreate = z.infer<typeof handshakesCreate>;

/** What the record shows: which protocols have their secret (Microsoft Graph and Dropbox need none). */
export type HandshakesConfig = { secrets: SecretField[] };

export const handshakeRecord = z.object({
  protocol: z.enum(PROTOCOLS),
  at: z.string().describe("When it was answered."),
});

export const handshakesInfo = z.object({
  ...pullCounts,
  secrets: z
    .array(z.enum(Object.keys(SECRET_FIELDS) as [SecretField, ...SecretField[]]))
    .describe("Which secrets were given at create."),
  handshakes: z.array(handshakeRecord).describe(`Challenges answered, newest first (the latest ${HANDSHAKE_LOG}).`),
});
