/**
 * What an Idempotency-Key is derived into (idempotency-store.ts derives and uses it). A leaf of its own: the
 * request's variables (env.ts, at the bottom of the imports) carry it.
 */
export interface KeyMaterial {
  id: string;
  fingerprint: string;
  aesKey: CryptoKey;
  /** HKDF key for requestBytes. */
  seed: CryptoKey;
}
