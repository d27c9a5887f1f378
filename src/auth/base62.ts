/** Fixed-width base62 for byte strings, so tokens have a constant length and no padding characters. */
const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const LOG2_62 = Math.log2(62);

export function base62Length(byteLength: number): number {
  return Math.ceil((byteLength * 8) / LOG2_62);
}

export function encodeBase62(bytes: Uint8Array): string {
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  let out = "";
  for (let i = 0; i < base62Length(bytes.length); i++) {
    out = ALPHABET[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out;
}

/** Returns null for a string that is not exactly the base62 form of `byteLength` bytes. */
export function decodeBase62(text: string, byteLength: number): Uint8Array | null {
  if (text.length !== base62Length(byteLength)) return null;
  let n = 0n;
  for (const ch of text) {
    const digit = ALPHABET.indexOf(ch);
    if (digit < 0) return null;
    n = n * 62n + BigInt(digit);
  }
  if (n >> BigInt(byteLength * 8) !== 0n) return null;
  const bytes = new Uint8Array(byteLength);
  for (let i = byteLength - 1; i >= 0; i--) {
    bytes[i] = Number(n & 0xffn);
    n >>= 8n;
  }
  return bytes;
}
