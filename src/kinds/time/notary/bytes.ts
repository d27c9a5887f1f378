/** Byte helpers of the notary: DER INTEGER contents and plain ArrayBuffers (encodings are in src/bytes.ts). */

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
