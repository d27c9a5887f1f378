/**
 * A public face's answer (kind/public-face.ts) as the HTTP response. Every kind's answers
 * go out through here, so the headers that keep the API's origin safe are set in one place:
 * `nosniff` everywhere, `no-store` unless the kind says otherwise, and for HTML a strict
 * Content-Security-Policy (nothing from any other origin; inline script and style only with
 * this response's nonce) and `X-Frame-Options: DENY`. An upstream's answer (a proxy) is fetched
 * and streamed back here, in the worker, beside the object's step rather than through it.
 */
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { toBase64 } from "../bytes";
import { serveObject } from "./downloads";
import { AppError, problemResponse } from "../http/errors";
import { DEFAULT_PUBLIC_BODY_BYTES, type PublicAnswer, type PublicRoute } from "./public-face";
import { endToEnd } from "./public-request";
import { proxyGuarded } from "../delivery/fetch-guarded";
import { masking } from "../http/masking";
import { notModified } from "../http/conditional";

/** Where an HTML page writes its nonce (`<script nonce="{{nonce}}">`): replaced per response. */
export const NONCE_SLOT = "{{nonce}}";

export function htmlPolicy(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "img-src 'self' data:",
    "connect-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/**
 * The policy of HTML an owner wrote, served from the API's own origin: sandboxed into an opaque
 * origin (no cookies, storage or credentials of ours; forms go nowhere), nothing loaded from any
 * other origin (docs/api.md#public-addresses), inline styles allowed (owners write them), and scripts only when the
 * owner opted in, then inline or from the same origin.
 */
export function authoredPolicy(scripts: boolean): string {
  return [
    `sandbox allow-popups allow-popups-to-escape-sandbox${scripts ? " allow-scripts" : ""}`,
    "default-src 'none'",
    `script-src ${scripts ? "'self' 'unsafe-inline'" : "'none'"}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "media-src 'self' data:",
    `connect-src ${scripts ? "'self'" : "'none'"}`,
    "form-action 'none'",
    "base-uri 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/**
 * An absolute URL as a header can carry it: non-ASCII percent-encoded, the host in punycode (a relative one as given).
 */
function asciiLocation(location: string): string {
  try {
    return new URL(location).href;
  } catch {
    return location;
  }
}

/** The stream, erroring once more than `limit` bytes passed (a body sent without Content-Length). */
function capped(stream: ReadableStream<Uint8Array>, limit: number): ReadableStream<Uint8Array> {
  let size = 0;
  return stream.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        size += chunk.byteLength;
        if (size > limit)
          controller.error(
            new AppError("payload_too_large", `This address takes bodies of at most ${limit} bytes here.`),
          );
        else controller.enqueue(chunk);
      },
    }),
  );
}

/** An upstream's status and the time to its answer, for a face that logs them. */
export type Settled = (outcome: { status: number; durationMs: number }) => void;

/**
 * An upstream's answer, passed back: its status and end-to-end headers, never its cookies, and no power over our
 * origin.
 */
async function upstream(
  c: Context<AppEnv>,
  answer: Extract<PublicAnswer, { type: "upstream" }>,
  route: PublicRoute | null,
  settled?: Settled,
): Promise<Response> {
  const method = answer.method ?? c.req.method;
  const headers = { ...answer.requestHeaders };
  const stream = route?.streamsBody && method !== "GET" && method !== "HEAD" ? c.req.raw.body : null;
  const length = c.req.header("content-length");
  if (stream && length && !Object.keys(headers).some((h) => h.toLowerCase() === "content-length"))
    headers["content-length"] = length;
  const body = stream && capped(stream, route!.maxBodyBytes ?? DEFAULT_PUBLIC_BODY_BYTES);
  const started = Date.now();
  let res: Response;
  try {
    res = await proxyGuarded(c.env, answer.url, { method, headers, body });
  } catch (err) {
    settled?.({ status: err instanceof AppError ? err.status : 502, durationMs: Date.now() - started });
    throw err;
  }
  settled?.({ status: res.status, durationMs: Date.now() - started });
  const redact = masking(answer.redact ?? []);
  const out = new Headers();
  for (const [name, value] of Object.entries(endToEnd(res.headers, ["set-cookie", "set-cookie2"])))
    out.set(name, redact.text(value));
  out.set("content-security-policy", "sandbox");
  out.set("x-content-type-options", "nosniff");
  const answerBody = c.req.method === "HEAD" || !res.body ? null : redact.stream(res.body);
  return new Response(answerBody, { status: res.status, headers: out });
}

/**
 * A conditional GET that an object answer's own validators (its ETag, its Last-Modified) satisfy: 304, without reading
 * R2.
 */
function unchanged(c: Context<AppEnv>, headers: Headers): boolean {
  const etag = headers.get("etag");
  if (!etag || (c.req.method !== "GET" && c.req.method !== "HEAD")) return false;
  const asked: Record<string, string> = {};
  for (const name of ["if-none-match", "if-modified-since"]) {
    const value = c.req.header(name);
    if (value !== undefined) asked[name] = value;
  }
  return notModified(asked, etag, Date.parse(headers.get("last-modified") ?? ""));
}

/**
 * `route`: the route that matched, when the answer may stream the request's body on (an upstream);
 * `settled` hears how that upstream answered.
 */
export async function publicResponse(
  c: Context<AppEnv>,
  answer: PublicAnswer,
  route: PublicRoute | null = null,
  settled?: Settled,
): Promise<Response> {
  const headers = new Headers({ "cache-control": "no-store", "x-content-type-options": "nosniff" });
  for (const [name, value] of Object.entries(answer.headers ?? {})) headers.set(name, value);
  const status = answer.status ?? 200;
  const head = c.req.method === "HEAD";
  const send = (body: BodyInit | null, type?: string) => {
    if (type) headers.set("content-type", type);
    return new Response(head || status === 204 || status === 304 ? null : body, { status, headers });
  };
  switch (answer.type) {
    case "json":
      return send(JSON.stringify(answer.body), "application/json");
    case "text":
      return send(answer.body, "text/plain; charset=utf-8");
    case "html": {
      headers.set("x-frame-options", "DENY");
      headers.set("referrer-policy", "no-referrer");
      if (answer.authored) {
        headers.set("content-security-policy", authoredPolicy(answer.authored.scripts));
        return send(answer.body, "text/html; charset=utf-8");
      }
      const nonce = toBase64(crypto.getRandomValues(new Uint8Array(16)));
      headers.set("content-security-policy", htmlPolicy(nonce));
      return send(answer.body.replaceAll(NONCE_SLOT, nonce), "text/html; charset=utf-8");
    }
    case "bytes":
      return send(answer.body, answer.contentType);
    case "object":
      if (status === 200 && unchanged(c, headers)) return new Response(null, { status: 304, headers });
      return serveObject(c, answer.key, Object.fromEntries(headers), status);
    case "redirect":
      headers.set("location", asciiLocation(answer.location));
      return new Response(null, { status: answer.status ?? 302, headers });
    case "empty":
      return new Response(null, { status: answer.status ?? 204, headers });
    case "problem":
      return problemResponse(new AppError(answer.code, answer.detail, { headers: answer.headers }), c);
    case "upstream":
      return upstream(c, answer, route, settled);
    case "read_body":
      throw new Error("read_body is the router's to act on");
  }
}
