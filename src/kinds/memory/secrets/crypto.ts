/**
 * How a one-time secret is kept: sealed with the service key (auth/sealing.ts, AES-256-GCM
 * under DATA_ENCRYPTION_KEY). With a passphrase, the value is first encrypted under a key
 * derived from the passphrase, so neither the stored row nor the service key alone opens
 * it; what is kept of the passphrase is a verifier, never the passphrase.
 *
 * PBKDF2-SHA-256 with a random 128-bit salt at 100,000 iterations, the most the Workers
 * runtime allows (OWASP asks for more; the attempt limit and the outer seal make up for
 * it). One derivation gives a master key; HMAC splits it into the verifier and the value
 * key, so checking a passphrase and decrypting cost one PBKDF2 run, not two.
 */
import { z } from "@hono/zod-openapi";
import { seal, unseal } from "../../../auth/sealing";
import { fromBase64, toBase64 } from "../../../bytes";
import type { Env } from "../../../env";

export const PBKDF2_ITERATIONS = 100_000;
const INNER = "p1";

/** What is stored of a passphrase. */
export type Verifier = z.infer<typeof verifierSchema>;
const verifierSchema = z.object({ salt: z.string(), verifier: z.string(), iterations: z.int().min(1) });

/** What init receives from sealCreate (never the value or the passphrase in clear), checked on arrival. */
export const sealedSecretSchema = z.object({
  sealed: z.string(),
  bytes: z.int(),
  passphrase: verifierSchema.nullable(),
  max_attempts: z.int().min(1),
});
export type SealedSecret = z.infer<typeof sealedSecretSchema>;

async function hmac(key: CryptoKey, label: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(label)));
}

/** The verifier and the value key of a passphrase (NFC, so one passphrase typed two ways is one). */
export async function derive(
  passphrase: string,
  salt: Uint8Array,
  iterations: number,
): Promise<{ verifier: Uint8Array; valueKey: Uint8Array }> {
  const material = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(passphrase.normalize("NFC")),
    "PBKDF2",
    false,
    ["deriveBits"],
  );
  const master = await crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt, iterations }, material, 256);
  const key = await crypto.subtle.importKey("raw", master, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return {
    verifier: await hmac(key, "zeitvault secrets: verifier"),
    valueKey: await hmac(key, "zeitvault secrets: value key"),
  };
}

/** Whether `passphrase` is the one behind `v`; when it is, the key that opens the value. */
export async function checkPassphrase(passphrase: string, v: Verifier): Promise<Uint8Array | null> {
  const { verifier, valueKey } = await derive(passphrase, fromBase64(v.salt), v.iterations);
  const stored = fromBase64(v.verifier);
  return stored.length === verifier.length && crypto.subtle.timingSafeEqual(stored, verifier) ? valueKey : null;
}

async function aesKey(raw: Uint8Array): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
}

async function encryptInner(valueKey: Uint8Array, value: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv },
    await aesKey(valueKey),
    new TextEncoder().encode(value),
  );
  return `${INNER}.${toBase64(iv)}.${toBase64(new Uint8Array(ct))}`;
}

async function decryptInner(valueKey: Uint8Array, inner: string): Promise<string> {
  const [version, iv, ct] = inner.split(".");
  if (version !== INNER || !iv || !ct) throw new Error("not a passphrase-encrypted value");
  const pt = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: fromBase64(iv) },
    await aesKey(valueKey),
    fromBase64(ct),
  );
  return new TextDecoder().decode(pt);
}

/**
 * Encrypts a new secret for storage: the value sealed (under the passphrase first, if any), and the passphrase's
 * verifier.
 */
export async function sealSecret(
  env: Env,
  value: string,
  passphrase: string | undefined,
  maxAttempts: number,
): Promise<SealedSecret> {
  const bytes = new TextEncoder().encode(value).byteLength;
  if (passphrase === undefined)
    return { sealed: await seal(env, value), bytes, passphrase: null, max_attempts: maxAttempts };
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const { verifier, valueKey } = await derive(passphrase, salt, PBKDF2_ITERATIONS);
  return {
    sealed: await seal(env, await encryptInner(valueKey, value)),
    bytes,
    passphrase: { salt: toBase64(salt), verifier: toBase64(verifier), iterations: PBKDF2_ITERATIONS },
    max_attempts: maxAttempts,
  };
}

/** Opens a released value: the service seal, then the passphrase's layer when there is one. */
export async function openSecret(env: Env, sealed: string, valueKey: string | null): Promise<string> {
  const opened = await unseal(env, sealed);
  return valueKey === null ? opened : decryptInner(fromBase64(valueKey), opened);
}

export const keyToText = toBase64;
