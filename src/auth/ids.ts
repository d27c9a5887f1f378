/** Random identifiers: 128 bits, base62, with a prefix that says what they name. */
import { base62Length } from "./base62";

export const ID_BYTES = 16;

export function randomBytes(length: number): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(length));
}

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/** As many base62 characters as 128 bits take (22: 131 bits), the length encodeBase62 gives ID_BYTES. */
const ID_CHARS = base62Length(ID_BYTES);

/** Random bytes for ids (never for secrets, which take theirs fresh), drawn from the CSPRNG a kilobyte at a time. */
const pool = new Uint8Array(1024);
let pooled = 0;

function idByte(): number {
  if (pooled === 0) {
    crypto.getRandomValues(pool);
    pooled = pool.length;
  }
  return pool[--pooled]!;
}

/**
 * A random id, drawn character by character (a byte below 248 = 4 × 62 picks one, evenly; others are
 * drawn again): nothing decodes these, so they skip the big-number arithmetic of encodeBase62, which
 * every request paid for its request id.
 */
export function randomId(prefix: string): string {
  let out = prefix;
  while (out.length < prefix.length + ID_CHARS) {
    const b = idByte();
    if (b < 248) out += ALPHABET[b % 62];
  }
  return out;
}

/**
 * Constant-time comparison of two equal-length hex digests: every character is compared whatever
 * the first difference. On the hot path of every paid call, so no encoding or allocation.
 */
export function digestsEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
