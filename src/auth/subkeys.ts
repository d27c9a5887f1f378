/**
 * The secret behind encryption at rest (DATA_ENCRYPTION_KEY), and keys for other purposes derived from it,
 * so there is one to keep. Apart from sealing.ts, whose AES the derived keys (download links, a bin's view
 * links) do not need at every isolate's start.
 */
import { hmac } from "@noble/hashes/hmac";
import { sha256 } from "@noble/hashes/sha2";
import { fromBase64, utf8 } from "../bytes";
import { isDevelopment, type Env } from "../env";

/** Made when first needed, not by every isolate's start-up (a JavaScript SHA-256 at load). */
let developmentKey: Uint8Array | undefined;

export function keyMaterial(env: Env): Uint8Array {
  if (env.DATA_ENCRYPTION_KEY) return fromBase64(env.DATA_ENCRYPTION_KEY);
  if (!isDevelopment(env)) throw new Error("DATA_ENCRYPTION_KEY is not configured");
  return (developmentKey ??= sha256(utf8("zeitvault development key: never used in production")));
}

/** A key for another purpose (e.g. signing download URLs), derived from the same secret so there is one to keep. */
export function subkey(env: Env, purpose: string): Uint8Array {
  return hmac(sha256, keyMaterial(env), utf8(`zeitvault subkey: ${purpose}`));
}
