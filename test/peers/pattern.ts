/**
 * The bytes large-transfer tests move: a fixed pseudo-random pattern (every byte value, no
 * repeats a part boundary could hide), made the same way by the peers in Node and by the tests
 * in workerd, so neither has to send the other what it expects.
 */
export function patternByte(i: number): number {
  return (Math.imul(i ^ (i >>> 7), 2654435761) >>> 24) & 255;
}

/** Bytes `start` to `end` (exclusive) of the pattern. */
export function pattern(start: number, end: number): Uint8Array {
  const bytes = new Uint8Array(end - start);
  for (let i = start; i < end; i++) bytes[i - start] = patternByte(i);
  return bytes;
}
