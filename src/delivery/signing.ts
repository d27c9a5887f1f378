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

const SECRET_PREFIX = "whsec_";

export function newSigningSecret(): string {
  return SECRET_PREFIX + toBase64(crypto.getRandomValues(new Uint8Array(32)));
}

export type SignedBody = string | Uint8Array | AsyncIterable<Uint8Array>;

export async function signatureHeaders(secret: string, id: string, body: SignedBody, timestamp = Math.floor(Date.now() / 1000)): Promise<Record<string, string>> {
  const mac = hmac.create(sha256, fromBase64(secret.slice(SECRET_PREFIX.length)));
  mac.update(utf8(`${id}.${timestamp}.`));
  if (typeof body === "string") mac.update(utf8(body));
  else if (body instanceof Uint8Array) mac.update(body);
  else for await (const chunk of body) mac.update(chunk);
  return { "webhook-id": id, "webhook-timestamp": String(timestamp), "webhook-signature": `v1,${toBase64(mac.digest())}` };
}
