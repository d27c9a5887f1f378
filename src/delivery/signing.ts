/**
 * Standard Webhooks signatures: `webhook-signature: v1,<base64 HMAC-SHA256 of
 * "{id}.{timestamp}.{body}">` keyed with the bytes of the resource's `whsec_`
 * secret, so any Standard Webhooks library verifies our deliveries.
 */
import { fromBase64, toBase64 } from "../bytes";

const SECRET_PREFIX = "whsec_";

export function newSigningSecret(): string {
  return SECRET_PREFIX + toBase64(crypto.getRandomValues(new Uint8Array(32)));
}

export async function signatureHeaders(secret: string, id: string, body: string, timestamp = Math.floor(Date.now() / 1000)): Promise<Record<string, string>> {
  const keyBytes = fromBase64(secret.slice(SECRET_PREFIX.length));
  const key = await crypto.subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${id}.${timestamp}.${body}`));
  return { "webhook-id": id, "webhook-timestamp": String(timestamp), "webhook-signature": `v1,${toBase64(new Uint8Array(mac))}` };
}
