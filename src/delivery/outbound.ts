/**
 * A request a caller configures for a kind to make later (a wakeup, a schedule's
 * tick, a drip): the fields its create body takes, and the OutgoingRequest built
 * from them for store.send.
 */
import { httpUrl } from "../openapi/schemas";
import { utf8Length } from "../bytes";
import { z } from "@hono/zod-openapi";
import type { OutgoingRequest } from "../kind/kind";
import { headerFields } from "../http/header-fields";

/** Headers we set ourselves (signature, framing): a configured one must not replace them. */
const RESERVED_HEADERS = new RegExp(
  "^(host|content-length|transfer-encoding|connection|keep-alive|upgrade|te|trailer|proxy-.*|" +
    "webhook-id|webhook-timestamp|webhook-signature)$",
  "i",
);
/**
 * A text body rides in the delivery row and the queue message (128 KB at most, sealed bodies grow by a third): larger
 * ones go by reference (StoredBody).
 */
export const MAX_INLINE_BODY_BYTES = 64 * 1024;

export const requestFields = {
  url: httpUrl.describe("The endpoint to call."),
  method: z.enum(["GET", "POST", "PUT", "PATCH", "DELETE"]).default("POST"),
  headers: headerFields(RESERVED_HEADERS, "host, framing and webhook-* headers are set by the service"),
  body: z
    .union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())])
    .optional()
    .describe("A string is sent as text/plain, anything else as JSON (unless headers set a content-type).")
    .refine(
      (b) => b === undefined || utf8Length(typeof b === "string" ? b : JSON.stringify(b)) <= MAX_INLINE_BODY_BYTES,
      `at most ${MAX_INLINE_BODY_BYTES} bytes`,
    ),
};

export interface RequestConfig {
  url: string;
  method: OutgoingRequest["method"];
  headers: Record<string, string>;
  body?: string | Record<string, unknown> | unknown[];
}

export function outgoingRequest(config: RequestConfig, eventType: string): OutgoingRequest & { body: string | null } {
  const text = typeof config.body === "string";
  const body =
    config.body === undefined ? null : typeof config.body === "string" ? config.body : JSON.stringify(config.body);
  const hasType = Object.keys(config.headers).some((k) => k.toLowerCase() === "content-type");
  const headers =
    body !== null && !hasType
      ? { ...config.headers, "content-type": text ? "text/plain; charset=utf-8" : "application/json" }
      : config.headers;
  return { url: config.url, method: config.method, headers, body, eventType };
}
