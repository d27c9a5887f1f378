/** Byte helpers of the notary: hex and base64 both ways, and DER INTEGER contents. */

export function toHex(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) out += b.toString(16).padStart(2, "0");
  return out;
}

export function fromHex(hex: string): Uint8Array {
  const padded = hex.length % 2 ? `0${hex}` : hex;
  const out = new Uint8Array(padded.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(padded.slice(i * 2, i * 2 + 2), 16);
  return out;
}

export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  // In chunks: spreading a large array into fromCharCode overflows the stack.
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** Throws on anything that is not base64 (standard alphabet, padding optional). */
export function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

/**
 * The contents octets of a DER INTEGER holding `magnitude` as a non-negative number:
 * leading zero bytes dropped (DER is minimal), one 0x00 added when the top bit is set
 * (else it would read as negative).
 */
export function unsignedInteger(magnitude: Uint8Array): Uint8Array {
  let start = 0;
  while (start < magnitude.length - 1 && magnitude[start] === 0) start++;
  const trimmed = magnitude.subarray(start);
  if (trimmed.length === 0) return new Uint8Array([0]);
  if (trimmed[0]! < 0x80) return trimmed.slice();
  const out = new Uint8Array(trimmed.length + 1);
  out.set(trimmed, 1);
  return out;
}

/** A copy as a plain ArrayBuffer (what pkijs, asn1js and SQLite BLOBs take). */
export const arrayBuffer = (bytes: Uint8Array): ArrayBuffer => bytes.slice().buffer;
