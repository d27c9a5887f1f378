/**
 * Reading a request that reached a public address (kind/public-face.ts): its body as text or posted
 * fields, a header, a query value, what it asks for, and the headers that may be passed on.
 */
import type { PublicRequest } from "./public-face";
import { AppError } from "../http/errors";
import { parseCallerJson } from "../http/json-depth";

/** Hop-by-hop headers (RFC 9110 §7.6.1) belong to one connection, not to the request or answer: never passed on. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

/**
 * `headers` without hop-by-hop ones (and those their Connection header names), lower-case names; also without `drop`.
 */
export function endToEnd(headers: Headers, drop: string[] = []): Record<string, string> {
  const named = new Set((headers.get("connection") ?? "").split(",").map((h) => h.trim().toLowerCase()));
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    if (!HOP_BY_HOP.has(name) && !named.has(name) && !drop.includes(name)) out[name] = value;
  });
  return out;
}

/**
 * The body as text (UTF-8, malformed sequences replaced); null without one. For routes taking at most
 * INLINE_PUBLIC_BODY_BYTES.
 */
export function bodyText(request: PublicRequest): string | null {
  const body = request.body;
  if (body === null) return null;
  if (!(body instanceof Uint8Array))
    throw new Error(`route ${request.route} takes bodies larger than its kind reads as text`);
  return new TextDecoder().decode(body);
}

/**
 * The fields a page's form posts, or a script's JSON object (by its Content-Type): what people's
 * pages take (an approval's decision, an incident's acknowledgement). JSON that does not parse, nests
 * too deep or is no object is a 400.
 */
export function postedFields(request: PublicRequest): Record<string, unknown> {
  const text = bodyText(request) ?? "";
  if (!/^application\/([\w.+-]+\+)?json\b/i.test(headerOf(request, "content-type") ?? ""))
    return Object.fromEntries(new URLSearchParams(text));
  const value = parseCallerJson(text, "body");
  if (!value || typeof value !== "object" || Array.isArray(value))
    throw new AppError("invalid_request", "Send a JSON object.");
  return value as Record<string, unknown>;
}

/** A header's value (names are lower case), or null. */
export const headerOf = (request: PublicRequest, name: string): string | null =>
  request.headers[name.toLowerCase()] ?? null;

/** The first value of a query key, or undefined. */
export const queryOf = (request: PublicRequest, key: string): string | undefined =>
  request.query.find(([k]) => k === key)?.[1];

/** A browser (it asks for HTML); API clients asking for JSON or anything else get JSON. */
export const prefersHtml = (request: Pick<PublicRequest, "headers">): boolean =>
  /\btext\/html\b/i.test(request.headers["accept"] ?? "");
