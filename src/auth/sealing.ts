/**
 * Encryption at rest for secrets the service must be able to read back
 * (webhook signing secrets, later one-time secrets and channel credentials):
 * AES-256-GCM under DATA_ENCRYPTION_KEY, a random 96-bit IV per value.
 * Outside production a fixed development key stands in, so `npm run dev`
 * needs no setup; production refuses to seal without the secret.
 */
import { sha256, stringToBytes } from "viem";
import { hmac } from "@noble/hashes/hmac";
import { sha256 as sha256Noble } from "@noble/hashes/sha2";
import { fromBase64, toBase64 } from "../bytes";
import { isDevelopment, type Env } from "../env";

const VERSION = "v1";
const keys = new Map<string, Promise<CryptoKey>>();

function keyMaterial(env: Env): Uint8Array {
  if (env.DATA_ENCRYPTION_KEY) return fromBase64(env.DATA_ENCRYPTION_KEY);
  if (!isDevelopment(env)) throw new Error("DATA_ENCRYPTION_KEY is not configured");
  return sha256(stringToBytes("zeitvault development key: never used in production"), "bytes");
}

/** A key for another purpose (e.g. signing download URLs), derived from the same secret so there is one to keep. */
export function subkey(env: Env, purpose: string): Uint8Array {
  return hmac(sha256Noble, keyMaterial(env), stringToBytes(`zeitvault subkey: ${purpose}`));
}

function key(env: Env): Promise<CryptoKey> {
  const id = env.DATA_ENCRYPTION_KEY ?? "dev";
  let k = keys.get(id);
  if (!k) {
    const material = keyMaterial(env);
    if (material.length !== 32) throw new Error("DATA_ENCRYPTION_KEY must be 32 bytes, base64-encoded");
    k = crypto.subtle.importKey("raw", material, "AES-GCM", false, ["encrypt", "decrypt"]);
    keys.set(id, k);
  }
  return k;
}

export async function seal(env: Env, plaintext: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = await crypto.subtle.encrypt({ name: "AES-GCM", iv }, await key(env), new TextEncoder().encode(plaintext));
  return `${VERSION}.${toBase64(iv)}.${toBase64(new Uint8Array(ct))}`;
}

export async function unseal(env: Env, sealed: string): Promise<string> {
  const [version, iv, ct] = sealed.split(".");
  if (version !== VERSION || !iv || !ct) throw new Error("not a sealed value");
  const pt = await crypto.subtle.decrypt({ name: "AES-GCM", iv: fromBase64(iv) }, await key(env), fromBase64(ct));
  return new TextDecoder().decode(pt);
}
