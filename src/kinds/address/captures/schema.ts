/**
 * What the address kinds that keep requests (inboxes, bins, handshakes) show of one: the fields
 * every capture has, which each kind's item schema extends with its own (ack state, a signature's
 * verdict, a raw download link).
 */
import { z } from "@hono/zod-openapi";
import { INLINE_PUBLIC_BODY_BYTES } from "../../../kind/public-face";

export const captureFields = {
  seq: z.int().describe("Arrival order, from 1: the capture's id."),
  received_at: z.string().describe("When the request reached the service."),
  duration_ms: z
    .int()
    .describe("Milliseconds from its arrival until it was stored (signature checks and body storage included)."),
  method: z.string(),
  path: z.string().describe('Below the address, exactly as sent ("" for the address itself).'),
  query: z.array(z.tuple([z.string(), z.string()])).describe("The query's pairs in order, repeated keys kept."),
  headers: z.record(z.string(), z.string()).describe("Every header but hop-by-hop ones, names in lower case."),
  client_ip: z.string().nullable(),
  content_type: z.string().nullable(),
  size: z.int().describe("Bytes of the body."),
  sha256: z.string().describe("Hex SHA-256 of the body."),
  body_text: z
    .string()
    .nullable()
    .describe(
      `The body, when it is UTF-8 and at most ${INLINE_PUBLIC_BODY_BYTES} bytes (byte-exact: it encodes ` +
        `back to the same bytes).`,
    ),
  body_base64: z
    .string()
    .nullable()
    .describe(`The body, base64, when it is at most ${INLINE_PUBLIC_BODY_BYTES} bytes but not UTF-8.`),
  body_url: z
    .string()
    .nullable()
    .describe(
      `A link that downloads the body without credentials, when it is larger than ` +
        `${INLINE_PUBLIC_BODY_BYTES} bytes (valid until the resource ends).`,
    ),
};

export type Capture = { [K in keyof typeof captureFields]: z.infer<(typeof captureFields)[K]> };

/** `{seq}` in an operation's path. */
export const seqParam = z.object({
  seq: z
    .string()
    .regex(/^\d{1,15}$/, "must be a capture's seq")
    .describe("The capture's seq."),
});
