/**
 * Byte encodings used across the service, each written once: hex, base64,
 * unpadded base64url, UTF-8, and SHA-256 (synchronous, and awaited for large bodies). They take and give bytes;
 * a caller with text encodes it to UTF-8 first, so no helper guesses a charset.
 */
import { sha256 as nobleSha256 } from "@noble/hashes/sha2";

export function toHex(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) out += b.toString(16).padStart(2, "0");
  return out;
}

/** Throws on an odd length or a non-hex digit (parseInt alone would read "0g" as 0). */
export function fromHex(hex: string): Uint8Array {
  if (hex.length % 2 || !/^[0-9a-fA-F]*$/.test(hex)) throw new TypeError("not an even-length hex string");
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  // In chunks: spreading a large array into fromCharCode overflows the stack.
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/**
 * Throws on anything that is not base64 (some callers answer 422 from the throw). It is
 * atob's forgiving decode: padding optional, ASCII whitespace ignored.
 */
export function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

/** URL-safe alphabet, no padding: for values that travel in query strings (list cursors). */
export const toBase64Url = (bytes: Uint8Array): string =>
  toBase64(bytes).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

/** Throws on anything that is not base64url; like fromBase64 it tolerates padding (and the standard alphabet). */
export const fromBase64Url = (text: string): Uint8Array => fromBase64(text.replace(/-/g, "+").replace(/_/g, "/"));

/**
 * SHA-256 of bytes as lowercase hex, through WebCrypto: off the hot path and for large
 * bodies, where sha256Hex would block the isolate.
 */
export async function digestHex(bytes: Uint8Array): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)));
}

const encoder = new TextEncoder();

/** A string's UTF-8 bytes. */
export const utf8 = (text: string): Uint8Array => encoder.encode(text);

/** A string's size as limits count it: UTF-8 bytes. */
export const utf8Length = (text: string): number => encoder.encode(text).length;

/** Synchronous SHA-256 (noble): on the hot path several times cheaper than an awaited WebCrypto digest. */
export const sha256 = (bytes: Uint8Array): Uint8Array => nobleSha256(bytes);

/** SHA-256 of a string's UTF-8 bytes (or of bytes), as lowercase hex. */
export const sha256Hex = (data: string | Uint8Array): string =>
  toHex(sha256(typeof data === "string" ? utf8(data) : data));

/** The bytes as text when they are valid UTF-8 (a leading BOM dropped), else null. */
export function utf8OrNull(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return null;
  }
}

/** The first `max` bytes of `text`, cut at a character boundary. */
export function utf8Prefix(text: string, max: number): string {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= max) return text;
  // A cut inside a multi-byte character decodes to U+FFFD: drop that partial tail.
  return new TextDecoder().decode(bytes.slice(0, max)).replace(/\uFFFD$/, "");
}

/** Bytes as a string of one character per byte (U+0000–U+00FF), as btoa takes them; and back. */
export const binaryString = (bytes: Uint8Array): string => Array.from(bytes, (b) => String.fromCharCode(b)).join("");
export const fromBinaryString = (text: string): Uint8Array => Uint8Array.from(text, (ch) => ch.charCodeAt(0));
