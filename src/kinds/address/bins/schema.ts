/**
 * Request and response shapes of bins: a request bin (webhook.site). Whatever arrives at the
 * address or below it is captured whole; the bin answers as configured. The same schemas validate,
 * type and document.
 */
import { z } from "@hono/zod-openapi";
import { pageLimit, seqCursor } from "../../../openapi/schemas";
import { MAX_PUBLIC_BODY_BYTES } from "../../../kind/public-face";
import { headerFields, mediaType } from "../../../http/header-fields";
import { captureFields } from "../captures/schema";
import { MAX_PAGE_BODY_BYTES } from "../captures/store";

/** Captures one bin keeps (clear it to make room). */
export const MAX_CAPTURES = 10_000;
/** Bytes of bodies one bin keeps, in all. */
export const MAX_BYTES = 512 * 1024 * 1024;
/** One request's body: larger is 413, nothing captured. */
export const MAX_CAPTURE_BYTES = MAX_PUBLIC_BODY_BYTES;
/** The longest a configured answer may wait (a slow endpoint, for testing a sender's timeout). */
export const MAX_DELAY_MS = 10_000;
/** A configured answer's body. */
export const MAX_RESPONSE_BODY_BYTES = 64 * 1024;

/**
 * Headers the answer may not set: framing (set by the runtime), the content type (`content_type`),
 * cookies (the address is on the API's own origin) and the security headers every public answer carries.
 */
const RESERVED_ANSWER_HEADERS = new RegExp(
  "^(host|content-length|content-type|transfer-encoding|connection|keep-alive|upgrade|te|trailer|proxy-.*|" +
    "set-cookie2?|content-security-policy.*|x-content-type-options|x-frame-options)$",
  "i",
);

export const binResponse = z
  .object({
    status: z.int().min(200).max(599).default(200).describe("The status every captured request is answered with."),
    content_type: mediaType
      .default("application/json")
      .describe("The answer's Content-Type (always sent with `nosniff` and a sandboxing Content-Security-Policy)."),
    body: z
      .string()
      .max(MAX_RESPONSE_BODY_BYTES)
      .nullable()
      .default(null)
      .describe(
        `The answer's body (UTF-8, at most ${MAX_RESPONSE_BODY_BYTES} characters); null answers ` +
          `\`{"received": true, "seq": n}\`.`,
      ),
    headers: headerFields(
      RESERVED_ANSWER_HEADERS,
      "framing, content-type, cookies and security headers are set by the service",
    ).describe("Extra headers on the answer."),
    delay_ms: z
      .int()
      .min(0)
      .max(MAX_DELAY_MS)
      .default(0)
      .describe(`Wait this long before answering (at most ${MAX_DELAY_MS} ms): the capture is stored first.`),
  })
  .strict()
  .openapi("BinResponse");
export type BinResponse = z.infer<typeof binResponse>;

export const binCreate = z.object({
  response: binResponse
    .default(binResponse.parse({}))
    .describe("How the bin answers what it captures (default: 200 with the capture's seq as JSON)."),
});
export type BinConfig = z.infer<typeof binCreate>;

export const binCapture = z
  .object({
    ...captureFields,
    raw_url: z
      .string()
      .nullable()
      .describe("Downloads the body's exact bytes, without credentials (the bin's view link); null when it is empty."),
  })
  .openapi("BinCapture");
export type BinCapture = z.infer<typeof binCapture>;

export const listInput = z.object({
  before: seqCursor.describe(
    "Captures older than this seq (a previous page's next_cursor); from the newest when absent.",
  ),
  limit: pageLimit(20),
});

export const listResult = z.object({
  items: z.array(binCapture).describe(`Newest first; a page stops early past ${MAX_PAGE_BODY_BYTES} bytes of bodies.`),
  next_cursor: z.string().nullable().describe("Pass as `before` for older captures; null when there are none."),
});

export const clearResult = z.object({
  deleted: z.int().describe("Captures deleted (seqs go on from where they were)."),
});

export const binInfo = z.object({
  captures: z.int(),
  bytes: z.int(),
  last_seq: z.int().describe("The seq of the latest capture (0 while none came)."),
  response: binResponse,
  view_url: z
    .string()
    .describe(
      "A page showing the captures to a person: anyone with this link can see them, so share it as you would the data.",
    ),
});
