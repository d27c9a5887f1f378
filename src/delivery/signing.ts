/**
 * Standard Webhooks signatures: `webhook-signature: v1,<base64 HMAC-SHA256 of
 * "{id}.{timestamp}.{body}">` keyed with the bytes of the resource's `whsec_`
 * secret, so any Standard Webhooks library verifies our deliveries. The body is
 * hashed as the exact bytes sent, fed in pieces, so a large stored body is signed
 * while it streams rather than held in memory.
 */
import { hmac } from "@noble/hashes/hmac";
import { sha256 } from "@noble/hashes/sha2";
import { fromBase64, toBase64, utf8 } from "../bytes";

export function newSigningSecret(bytes: Uint8Array = crypto.getRandomValues(new Uint8Array(32))): string {
  return "whsec_" + toBase64(bytes);
}

export type SignedBody = string | Uint8Array | AsyncIterable<Uint8Array>;

/** The bytes of a `whsec_` secret: the HMAC key of Standard Webhooks. */
export const standardWebhooksKey = (secret: string): Uint8Array => fromBase64(secret.replace(/^whsec_/, ""));

export async function signatureHeaders(
  secret: string,
  id: string,
  body: SignedBody,
  timestamp = Math.floor(Date.now() / 1000),
): Promise<Record<string, string>> {
  const mac = await hmacSha256(standardWebhooksKey(secret), `${id}.${timestamp}.`, body);
  return { "webhook-id": id, "webhook-timestamp": String(timestamp), "webhook-signature": `v1,${toBase64(mac)}` };
}

/**
 * HMAC-SHA256 of `prefix` followed by the body: the shape of every webhook signature (Standard
 * Webhooks, Stripe, Slack, GitHub, Shopify differ only in the prefix, the key and the encoding).
 */
export async function hmacSha256(key: Uint8Array, prefix: string, body: SignedBody): Promise<Uint8Array> {
  const mac = hmac.create(sha256, key);
  mac.update(utf8(prefix));
  if (typeof body === "string") mac.update(utf8(body));
  else if (body instanceof Uint8Array) mac.update(body);
  else for await (const chunk of body) mac.update(chunk);
  return mac.digest();
}
