/**
 * What the service accepts where a caller's text ends up in an HTTP header: the
 * headers of a configured outbound request, a stored media type, a download's
 * file name. Checked once, at the request that brings them (422 naming the
 * field), so a stored value can never make a later request or answer fail
 * (a CR, LF or NUL is refused by the runtime's Headers, and was a 500 then).
 */
import { z } from "@hono/zod-openapi";

/** RFC 9110 §5.6.2: a token. */
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
/** RFC 9110 §5.6.4: a quoted-string, ASCII only. */
const QUOTED = String.raw`"(?:[\t \x21\x23-\x5b\x5d-\x7e]|\\[\t \x21-\x7e])*"`;
const MEDIA_TYPE = new RegExp(String.raw`^${TOKEN}/${TOKEN}(?:[ \t]*;[ \t]*(?:${TOKEN}=(?:${TOKEN}|${QUOTED}))?)*$`);

export const HEADER_NAME = new RegExp(`^${TOKEN}$`);
/** RFC 9110 §5.5: visible ASCII, obs-text, space and tab; never CR, LF, NUL or another control. */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

export const MAX_HEADERS = 32;

export const headerName = z.string().max(64).regex(HEADER_NAME, "must be an HTTP header name (RFC 9110 token)");
export const headerValue = z
  .string()
  .max(4096)
  .regex(FIELD_VALUE, "must be a valid header value: no CR, LF, NUL or other control characters");

/** Set by the fetch itself (framing, routing): a caller's value would break or misroute it. */
export const CONNECTION_HEADERS =
  /^(host|content-length|transfer-encoding|connection|keep-alive|upgrade|te|trailer|proxy-.*)$/i;

/**
 * Headers a caller configures for a request the service makes, none of them one the service sets itself (`reserved`).
 */
export function headerFields(reserved: RegExp, why: string) {
  return z
    .record(headerName, headerValue)
    .default({})
    .refine((h) => Object.keys(h).length <= MAX_HEADERS, `at most ${MAX_HEADERS} headers`)
    .refine((h) => !Object.keys(h).some((k) => reserved.test(k)), why);
}

/** A media type as RFC 9110 §8.3.1 writes it (`text/plain; charset=utf-8`), ASCII only. */
export const mediaType = z
  .string()
  .max(255)
  .regex(MEDIA_TYPE, "must be a media type like text/plain or text/csv; charset=utf-8 (RFC 9110)");

export const isMediaType = (value: string) => value.length <= 255 && MEDIA_TYPE.test(value);

/** C0 and C1 controls, DEL, path separators; a lone surrogate cannot be encoded. */
const NOT_IN_FILENAME =
  /[\u0000-\u001f\u007f-\u009f/\\]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * A download's file name: any Unicode text (it travels as RFC 8187 `filename*`), without controls or path separators.
 */
export const fileName = z
  .string()
  .min(1)
  .max(255)
  .refine((n) => !NOT_IN_FILENAME.test(n), "must be a plain file name: no control characters, / or \\")
  .refine((n) => n !== "." && n !== "..", "must not be . or ..");

/**
 * `attachment` with the file name as RFC 6266 §4.3 advises: an ASCII `filename` for old clients
 * and, when the name is not plain ASCII, the exact name as RFC 8187 `filename*` (UTF-8).
 */
export function attachmentDisposition(name: string | undefined): string {
  if (!name) return "attachment";
  const ascii = name.replace(/[^\x20-\x7e]/g, "_").replace(/["\\]/g, "_");
  if (ascii === name) return `attachment; filename="${name}"`;
  const encoded = encodeURIComponent(name).replace(
    /['()*]/g,
    (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/** Whether a header value can be sent as is (for values read back from storage made before these checks). */
export const isHeaderValue = (value: string) => FIELD_VALUE.test(value);
