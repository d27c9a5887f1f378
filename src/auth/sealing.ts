/**
 * Encryption at rest for secrets the service must be able to read back
 * (webhook signing secrets, one-time secrets, released payloads, channel
 * credentials): AES-256-GCM under DATA_ENCRYPTION_KEY, a random 96-bit IV per
 * value. Synchronous (@noble/ciphers, byte for byte what WebCrypto's AES-GCM
 * makes), so a value can be sealed inside a Durable Object's transaction.
 * Outside production a fixed development key stands in, so `npm run dev` needs
 * no setup; production refuses to seal without the secret.
 */
import { gcm } from "@noble/ciphers/aes";
import { fromBase64, toBase64, utf8 } from "../bytes";
import type { Env } from "../env";
import { keyMaterial } from "./subkeys";

const VERSION = "v1";

function key(env: Env): Uint8Array {
  const material = keyMaterial(env);
  if (material.length !== 32) throw new Error("DATA_ENCRYPTION_KEY must be 32 bytes, base64-encoded");
  return material;
}

export function seal(env: Env, plaintext: string): string {
  return sealWith(key(env), plaintext);
}

export function unseal(env: Env, sealed: string): string {
  return unsealWith(key(env), sealed);
}

/** Sealed under a key of the caller's own (32 bytes), as `seal` does under the service's. */
export function sealWith(key: Uint8Array, plaintext: string): string {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  return `${VERSION}.${toBase64(iv)}.${toBase64(gcm(key, iv).encrypt(utf8(plaintext)))}`;
}

export function unsealWith(key: Uint8Array, sealed: string): string {
  const [version, iv, ct] = sealed.split(".");
  if (version !== VERSION || !iv || !ct) throw new Error("not a sealed value");
  return new TextDecoder().decode(gcm(key, fromBase64(iv)).decrypt(fromBase64(ct)));
}
