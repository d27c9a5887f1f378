/** Request and response shapes of notary: RFC 3161 time stamps kept in a hash-chained log. */
import { z } from "@hono/zod-openapi";
import { pageLimit, seqCursor, exactlyOneOf } from "../../../openapi/schemas";
import { CHAIN_RULE } from "./chain";

/** Stamps one resource keeps: its export (every stamp, tokens included) stays well below an RPC answer's size. */
export const MAX_STAMPS = 5000;
/** Raw data hashed server-side; larger files are hashed by the caller and sent as `sha256`. */
export const MAX_DATA_BYTES = 512 * 1024;

/** A notary takes no settings: the TSA, its policy and its certificate are the service's. */
export const notaryConfig = z.object({});
export type NotaryConfig = z.infer<typeof notaryConfig>;

const SHA256_HEX = /^[0-9a-fA-F]{64}$/;
const sha256Field = z.string().regex(SHA256_HEX, "must be 64 hex digits (a SHA-256)");

export const stampInput = exactlyOneOf(
  z.object({
    sha256: sha256Field.optional().describe("The SHA-256 to stamp, as 64 hex digits (what `sha256sum` prints)."),
    data: z
      .string()
      .optional()
      .describe(`Or: text, stamped as the SHA-256 of its UTF-8 bytes (at most ${MAX_DATA_BYTES} bytes, else 413).`),
    data_base64: z
      .base64()
      .optional()
      .describe(
        `Or: bytes as base64, stamped as the SHA-256 of the decoded bytes (at most ${MAX_DATA_BYTES} bytes, else 413).`,
      ),
    nonce: z
      .string()
      .regex(/^[0-9a-fA-F]{1,32}$/, "must be 1 to 32 hex digits")
      .optional()
      .describe(
        "A number of your choosing, in hex (up to 128 bits), put into the signed TSTInfo.nonce so the " +
          "token provably answers this request.",
      ),
  }),
  ["sha256", "data", "data_base64"],
);

export type StampInput = z.infer<typeof stampInput>;

export const stamp = z
  .object({
    seq: z.int().describe("Position in this resource's log, from 1."),
    serial: z.string().describe("TSTInfo.serialNumber: 32 lowercase hex digits, random, unique per stamp."),
    sha256: z.string().describe("The stamped digest (TSTInfo.messageImprint, SHA-256), lowercase hex."),
    gen_time: z.string().describe("TSTInfo.genTime (RFC 3339 UTC, milliseconds); the token states an accuracy of 1 s."),
    nonce: z.string().nullable().describe("TSTInfo.nonce as sent (lowercase hex, leading zeros dropped), or null."),
    policy: z.string().describe("TSTInfo.policy: the TSA policy OID the stamp was issued under."),
    tsr: z
      .string()
      .describe(
        "The RFC 3161 TimeStampResp (status granted, then the TimeStampToken: CMS SignedData over the " +
          "TSTInfo, with the TSA certificate), DER, base64. Verify it with `base64 -d > stamp.tsr` and " +
          "`openssl ts -verify -in stamp.tsr -digest <sha256> -CAfile tsa.pem`, tsa.pem from GET " +
          "/v1/tsa/certificate.pem.",
      ),
    prev_chain: z.string().describe("The previous entry's chain (64 zeros for the first)."),
    chain: z.string().describe(`This entry's link in the log's hash chain: ${CHAIN_RULE}`),
  })
  .openapi("NotaryStamp");

export type Stamp = z.infer<typeof stamp>;

export const listInput = z.object({ limit: pageLimit(), cursor: seqCursor });

export const findInput = z.object({
  sha256: sha256Field.describe("The digest to look for."),
  limit: pageLimit(),
  cursor: seqCursor,
});

export const lookupInput = exactlyOneOf(
  z.object({
    seq: z.coerce
      .number()
      .int()
      .min(1)
      .max(MAX_STAMPS)
      .optional()
      .describe("The stamp's position in the log. Give this or serial."),
    serial: z
      .string()
      .regex(/^[0-9a-fA-F]{1,40}$/, "must be hex")
      .optional()
      .describe("Or: its serial number (as in `serial`)."),
  }),
  ["seq", "serial"],
);

export const stampPage = z
  .object({ items: z.array(stamp), next_cursor: z.string().nullable() })
  .openapi("NotaryStampPage", { description: "Stamps in log order (oldest first)." });
