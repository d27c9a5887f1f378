/** Random identifiers: 128 bits, base62, with a prefix that says what they name. */
import { encodeBase62 } from "./base62";

export const ID_BYTES = 16;

export function randomBytes(length: number): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(length));
}

export function randomId(prefix: string): string {
  return prefix + encodeBase62(randomBytes(ID_BYTES));
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
