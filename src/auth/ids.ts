/** Random identifiers: 128 bits, base62, with a prefix that says what they name. */
import { encodeBase62 } from "./base62";

export const ID_BYTES = 16;

export function randomBytes(length: number): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(length));
}

export function randomId(prefix: string): string {
  return prefix + encodeBase62(randomBytes(ID_BYTES));
}


/** Constant-time comparison of two equal-length hex digests. */
export function digestsEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  const enc = new TextEncoder();
  return crypto.subtle.timingSafeEqual(enc.encode(a), enc.encode(b));
}
