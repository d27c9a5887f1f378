/**
 * A public face's answer (resources/public-face.ts) as the HTTP response. Every kind's answers
 * go out through here, so the headers that keep the API's origin safe are set in one place:
 * `nosniff` everywhere, `no-store` unless the kind says otherwise, and for HTML a strict
 * Content-Security-Policy (nothing from any other origin; inline script and style only with
 * this response's nonce) and `X-Frame-Options: DENY`.
 */
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { toBase64 } from "../bytes";
import { serveObject } from "./downloads";
import type { PublicAnswer } from "./public-face";

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

export async function publicResponse(c: Context<AppEnv>, answer: PublicAnswer): Promise<Response> {
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
      const nonce = toBase64(crypto.getRandomValues(new Uint8Array(16)));
      headers.set("content-security-policy", htmlPolicy(nonce));
      headers.set("x-frame-options", "DENY");
      headers.set("referrer-policy", "no-referrer");
      return send(answer.body.replaceAll(NONCE_SLOT, nonce), "text/html; charset=utf-8");
    }
    case "bytes":
      return send(answer.body, answer.contentType);
    case "object":
      return serveObject(c, answer.key, Object.fromEntries(headers));
    case "redirect":
      headers.set("location", answer.location);
      return new Response(null, { status: answer.status ?? 302, headers });
    case "empty":
      return new Response(null, { status: answer.status ?? 204, headers });
  }
}
