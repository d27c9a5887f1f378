/**
 * Webhook signatures as each provider documents them, for inboxes and handshakes. All seven are an HMAC-SHA256 over a
 * prefix and the raw body; they differ in the prefix, the key, where the signature travels and
 * how it is encoded, and whether a signed timestamp bounds replays:
 *
 * - Stripe: `Stripe-Signature: t=<unix>,v1=<hex>[,v1=…]` over `"<t>." + body`, keyed with the
 *   secret's text (`whsec_…` as shown); any v1 may match (secrets being rolled).
 * - GitHub: `X-Hub-Signature-256: sha256=<hex>` over the body.
 * - Slack: `X-Slack-Signature: v0=<hex>` over `"v0:<X-Slack-Request-Timestamp>:" + body`.
 * - Standard Webhooks: `webhook-signature: v1,<base64> [v1,<base64> …]` over
 *   `"<webhook-id>.<webhook-timestamp>." + body`, keyed with the base64 bytes after `whsec_`.
 * - Shopify: `X-Shopify-Hmac-Sha256: <base64>` over the body.
 * - Twitch EventSub: `Twitch-Eventsub-Message-Signature: sha256=<hex>` over
 *   `<Twitch-Eventsub-Message-Id><Twitch-Eventsub-Message-Timestamp>` + body (an RFC 3339 time,
 *   within 10 minutes, as Twitch asks).
 * - Zoom: `x-zm-signature: v0=<hex>` over `"v0:<x-zm-request-timestamp>:" + body`.
 *
 * A check answers why it failed, so the agent can tell a wrong secret from a stale replay.
 */
import { digestsEqual } from "../../../auth/ids";
import { toBase64, toHex, utf8 } from "../../../bytes";
import { hmacSha256, standardWebhooksKey, type SignedBody } from "../../../delivery/signing";

/** How far a signed timestamp may be from now (Stripe's default; Slack and Standard Webhooks say five minutes). */
export const SIGNATURE_TOLERANCE_SECONDS = 300;
/** Twitch's own bound: "older than 10 minutes". */
const TWITCH_TOLERANCE_SECONDS = 600;

export const PROVIDERS = ["stripe", "github", "slack", "standard-webhooks", "shopify", "twitch", "zoom"] as const;
export type Provider = (typeof PROVIDERS)[number];

export type Verdict = { verified: true; error: null } | { verified: false; error: string };

type Headers = Record<string, string>;

interface Scheme {
  /** What is signed before the body, or why the request cannot be checked (a header missing, a stale time). */
  prefix(headers: Headers, nowSeconds: number): { prefix: string } | { error: string };
  key(secret: string): Uint8Array;
  /** The signatures the request carries, in the encoding `encode` gives a computed one. */
  claimed(headers: Headers): string[];
  encode(mac: Uint8Array): string;
}

function fresh(
  timestamp: string | undefined,
  nowSeconds: number,
  header: string,
  tolerance = SIGNATURE_TOLERANCE_SECONDS,
): { error: string } | null {
  if (timestamp === undefined) return { error: `${header} is missing` };
  const seconds = /^\d{1,12}$/.test(timestamp)
    ? Number(timestamp)
    : tolerance === TWITCH_TOLERANCE_SECONDS
      ? Date.parse(timestamp) / 1000
      : NaN;
  if (!Number.isFinite(seconds)) return { error: `${header} is not a time` };
  if (Math.abs(nowSeconds - seconds) > tolerance) return { error: `${header} is more than ${tolerance} s from now` };
  return null;
}

/** `a=1,b=2,b=3` → pairs, as Stripe's header lists them. */
const pairs = (value: string | undefined): [string, string][] =>
  (value ?? "").split(",").map((part): [string, string] => {
    const at = part.indexOf("=");
    return at < 0 ? [part.trim(), ""] : [part.slice(0, at).trim(), part.slice(at + 1).trim()];
  });

const textKey = (secret: string) => utf8(secret);

const SCHEMES: Record<Provider, Scheme> = {
  stripe: {
    prefix: (h, now) => {
      if (h["stripe-signature"] === undefined) return { error: "Stripe-Signature is missing" };
      const t = pairs(h["stripe-signature"]).find(([k]) => k === "t")?.[1];
      return fresh(t, now, "the t= of Stripe-Signature") ?? { prefix: `${t}.` };
    },
    key: textKey,
    claimed: (h) =>
      pairs(h["stripe-signature"])
        .filter(([k]) => k === "v1")
        .map(([, v]) => v.toLowerCase()),
    encode: toHex,
  },
  github: {
    prefix: (h) =>
      h["x-hub-signature-256"] === undefined ? { error: "X-Hub-Signature-256 is missing" } : { prefix: "" },
    key: textKey,
    claimed: (h) => [h["x-hub-signature-256"]!.trim().toLowerCase()],
    encode: (mac) => `sha256=${toHex(mac)}`,
  },
  slack: {
    prefix: (h, now) => {
      if (h["x-slack-signature"] === undefined) return { error: "X-Slack-Signature is missing" };
      const ts = h["x-slack-request-timestamp"];
      return fresh(ts, now, "X-Slack-Request-Timestamp") ?? { prefix: `v0:${ts}:` };
    },
    key: textKey,
    claimed: (h) => [h["x-slack-signature"]!.trim().toLowerCase()],
    encode: (mac) => `v0=${toHex(mac)}`,
  },
  "standard-webhooks": {
    prefix: (h, now) => {
      if (h["webhook-signature"] === undefined) return { error: "webhook-signature is missing" };
      if (h["webhook-id"] === undefined) return { error: "webhook-id is missing" };
      const ts = h["webhook-timestamp"];
      return fresh(ts, now, "webhook-timestamp") ?? { prefix: `${h["webhook-id"]}.${ts}.` };
    },
    key: (secret) => {
      try {
        return standardWebhooksKey(secret);
      } catch {
        return textKey(secret); // not base64: it cannot match a real sender's key, and the check says so
      }
    },
    claimed: (h) => h["webhook-signature"]!.split(" ").filter((s) => s.startsWith("v1,")),
    encode: (mac) => `v1,${toBase64(mac)}`,
  },
  shopify: {
    prefix: (h) =>
      h["x-shopify-hmac-sha256"] === undefined ? { error: "X-Shopify-Hmac-Sha256 is missing" } : { prefix: "" },
    key: textKey,
    claimed: (h) => [h["x-shopify-hmac-sha256"]!.trim()],
    encode: toBase64,
  },
  twitch: {
    prefix: (h, now) => {
      if (h["twitch-eventsub-message-signature"] === undefined)
        return { error: "Twitch-Eventsub-Message-Signature is missing" };
      if (h["twitch-eventsub-message-id"] === undefined) return { error: "Twitch-Eventsub-Message-Id is missing" };
      const ts = h["twitch-eventsub-message-timestamp"];
      return (
        fresh(ts, now, "Twitch-Eventsub-Message-Timestamp", TWITCH_TOLERANCE_SECONDS) ?? {
          prefix: `${h["twitch-eventsub-message-id"]}${ts}`,
        }
      );
    },
    key: textKey,
    claimed: (h) => [h["twitch-eventsub-message-signature"]!.trim().toLowerCase()],
    encode: (mac) => `sha256=${toHex(mac)}`,
  },
  zoom: {
    prefix: (h, now) => {
      if (h["x-zm-signature"] === undefined) return { error: "x-zm-signature is missing" };
      const ts = h["x-zm-request-timestamp"];
      return fresh(ts, now, "x-zm-request-timestamp") ?? { prefix: `v0:${ts}:` };
    },
    key: textKey,
    claimed: (h) => [h["x-zm-signature"]!.trim().toLowerCase()],
    encode: (mac) => `v0=${toHex(mac)}`,
  },
};

/** Checks a request's signature against `secret`; the body is read once, in pieces when it streams from R2. */
export async function verify(
  provider: Provider,
  secret: string,
  headers: Headers,
  body: SignedBody,
  now: number,
): Promise<Verdict> {
  const scheme = SCHEMES[provider];
  const signed = scheme.prefix(headers, Math.floor(now / 1000));
  if ("error" in signed) return { verified: false, error: signed.error };
  const expected = scheme.encode(await hmacSha256(scheme.key(secret), signed.prefix, body));
  // Compared in constant time, each claimed signature whole.
  const match = scheme.claimed(headers).some((claimed) => digestsEqual(claimed, expected));
  return match
    ? { verified: true, error: null }
    : { verified: false, error: "the signature does not match the body and the secret" };
}
