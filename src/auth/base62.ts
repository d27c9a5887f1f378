/**
 * Fixed-width base62 for byte strings, so tokens have a constant length and no padding characters.
 * Every paid call decodes two tokens and encodes their ids, so both directions avoid a BigInt
 * operation per character: encoding divides by 62^8 at a time, decoding multiplies into the bytes.
 */
const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const LOG2_62 = Math.log2(62);
/** 62^8 < 2^53: eight digits at a time stay exact as a Number. */
const CHUNK = 62n ** 8n;
const DIGITS = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DIGITS[ALPHABET.charCodeAt(i)] = i;

export function base62Length(byteLength: number): number {
  return Math.ceil((byteLength * 8) / LOG2_62);
}

export function encodeBase62(bytes: Uint8Array): string {
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  const out = new Array<string>(base62Length(bytes.length));
  for (let at = out.length - 1; at >= 0;) {
    let chunk = Number(n % CHUNK);
    n /= CHUNK;
    for (let k = 0; k < 8 && at >= 0; k++, at--) {
      out[at] = ALPHABET[chunk % 62]!;
      chunk = Math.floor(chunk / 62);
    }
  }
  return out.join("");
}

/** Returns null for a string that is not exactly the base62 form of `byteLength` bytes. */
export function decodeBase62(text: string, byteLength: number): Uint8Array | null {
  if (text.length !== base62Length(byteLength)) return null;
  const bytes = new Uint8Array(byteLength);
  for (let t = 0; t < text.length; t++) {
    const code = text.charCodeAt(t);
    let carry = code < 128 ? DIGITS[code]! : -1;
    if (carry < 0) return null;
    for (let i = byteLength - 1; i >= 0; i--) {
      const acc = bytes[i]! * 62 + carry;
      bytes[i] = acc & 0xff;
      carry = acc >> 8;
    }
    // More than byteLength bytes' worth: not the form of any value that size.
    if (carry !== 0) return null;
  }
  return bytes;
}
