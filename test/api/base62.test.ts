/**
 * Tokens and ids already handed out must keep decoding to the same objects: the base62 codec
 * and the token checksum against fixed vectors (made with the first, BigInt-per-digit codec),
 * and a round trip with refusals of what is not the form of a value of the given size; a token's
 * readings (parts, hash), kept per isolate, the same as reading it afresh.
 */
import { describe, expect, it } from "vitest";
import { decodeBase62, encodeBase62 } from "../../src/auth/base62";
import {
  checksum,
  hashToken,
  issueCreditToken,
  issueManagementToken,
  parseCreditToken,
  parseManagementToken,
} from "../../src/auth/tokens";
import { fromHex, sha256Hex, toHex } from "../../src/bytes";

const VECTORS: [string, string][] = [
  ["ffffffff", "4gfFC3"],
  ["00000000000000000000000000000000", "0000000000000000000000"],
  ["ffffffffffffffffffffffffffffffff", "7n42DGM5Tflk9n8mt7Fhc7"],
  ["0123456789abcdef0123456789abcdef", "0296tiiBb3U904RIpygpjj"],
  ["a5".repeat(56), "1kUUMmghaZF8vyXnN0kl8Ym1IwteP6OFer4zF0wan9p6XW1V8EJbfY1aTJC3asl3VNzGpF5S3D0f"],
];

describe("base62", () => {
  it("encodes and decodes the fixed vectors", () => {
    for (const [hex, text] of VECTORS) {
      expect(encodeBase62(fromHex(hex))).toBe(text);
      expect(toHex(decodeBase62(text, hex.length / 2)!)).toBe(hex);
    }
  });

  it("round-trips random values and refuses what no value of that size encodes to", () => {
    for (let i = 0; i < 500; i++) {
      const bytes = crypto.getRandomValues(new Uint8Array([4, 16, 24, 56][i % 4]!));
      expect(decodeBase62(encodeBase62(bytes), bytes.length)).toEqual(bytes);
    }
    expect(decodeBase62("zzzzzzzzzzzzzzzzzzzzzz", 16)).toBeNull(); // 62^22 − 1 > 2^128 − 1
    expect(decodeBase62("000000000000000000000_", 16)).toBeNull();
    expect(decodeBase62("00000000000000000000é0", 16)).toBeNull();
    expect(decodeBase62("0", 16)).toBeNull();
  });

  it("checksums as CRC-32 did (the standard check value, as six base62 characters)", () => {
    expect(checksum("123456789")).toBe(encodeBase62(fromHex("cbf43926")));
  });
  it("a token's readings, kept per isolate, equal reading it afresh, and cannot be changed by a caller", () => {
    const credit = issueCreditToken();
    const sub = issueCreditToken(credit.parts.accountId);
    const mgmt = issueManagementToken();
    for (let round = 0; round < 2; round++) {
      expect(parseCreditToken(credit.token)).toEqual(credit.parts);
      expect(parseCreditToken(sub.token)).toEqual(sub.parts);
      expect(parseManagementToken(mgmt.token)).toEqual(mgmt.parts);
      expect(hashToken(credit.token)).toBe(credit.hash);
      expect(hashToken(mgmt.token)).toBe(mgmt.hash);
    }
    expect(Object.isFrozen(parseCreditToken(credit.token))).toBe(true);
    // A checksum that does not match, and a string far longer than any token (read each time, not kept), are no tokens.
    expect(parseCreditToken(credit.token.slice(0, -1) + (credit.token.endsWith("0") ? "1" : "0"))).toBeNull();
    const long = "zv_" + "a".repeat(5000);
    expect(parseCreditToken(long)).toBeNull();
    expect(hashToken(long)).toBe(sha256Hex(long));
  });
});
