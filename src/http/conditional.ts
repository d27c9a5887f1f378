/**
 * Conditional GET (RFC 9110 §13): whether a request's validators let it be answered 304 Not
 * Modified. If-None-Match, when present, decides alone (weak comparison, `*` matches anything);
 * otherwise If-Modified-Since, at the one-second precision of HTTP dates.
 */

/** An HTTP date (RFC 9110 §5.6.7) for Unix ms. */
export const httpDate = (ms: number): string => new Date(ms).toUTCString();

const opaque = (tag: string) => tag.trim().replace(/^W\//, "");

/** `headers`: lower-case names. `etag`: quoted, as sent in ETag. */
export function notModified(headers: Record<string, string>, etag: string, lastModified: number): boolean {
  const match = headers["if-none-match"];
  if (match !== undefined) return match.trim() === "*" || match.split(",").some((tag) => opaque(tag) === opaque(etag));
  const since = Date.parse(headers["if-modified-since"] ?? "");
  return !Number.isNaN(since) && Math.floor(lastModified / 1000) * 1000 <= since;
}
