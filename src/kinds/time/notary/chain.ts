/**
 * The stamp log's hash chain. Each entry's `chain` commits to the previous entry's
 * `chain` and to this entry, including the SHA-256 of its signed response, so a
 * holder of the head can tell whether any earlier stamp was changed, dropped or
 * reordered. Plain text and SHA-256 only, so any language recomputes it; the same
 * words go into the OpenAPI document (CHAIN_RULE).
 */
import { toHex, sha256, sha256Hex } from "../../../bytes";

/** The `prev_chain` of the first entry. */
export const GENESIS = "0".repeat(64);

export interface ChainedFields {
  seq: number;
  serial: string;
  sha256: string;
  gen_time: string;
  /** The DER TimeStampResp. */
  tsr: Uint8Array;
}

export const CHAIN_RULE =
  'chain = lowercase hex SHA-256 of the UTF-8 text prev_chain + "\\n" + seq + "\\n" + serial + "\\n" + ' +
  'sha256 + "\\n" + gen_time + "\\n" + tsr_sha256, ' +
  "where seq is in decimal, serial, sha256 and gen_time are exactly as in this object, tsr_sha256 is the " +
  "lowercase hex SHA-256 of the DER bytes of tsr (base64-decoded), " +
  `there is no trailing newline, and the first entry's prev_chain is 64 zeros (${GENESIS.slice(0, 8)}…).`;

/** The bytes an entry's chain hash covers (see CHAIN_RULE). */
export function chainText(prevChain: string, e: ChainedFields): string {
  return [prevChain, String(e.seq), e.serial, e.sha256, e.gen_time, toHex(sha256(e.tsr))].join("\n");
}

export function chainHash(prevChain: string, e: ChainedFields): string {
  return sha256Hex(chainText(prevChain, e));
}
