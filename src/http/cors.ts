/**
 * CORS for every origin: credentials travel in headers, never cookies, so any page may call.
 * Preflights are answered by Hono's cors middleware; every other answer gets its headers once it
 * is made. (Hono's middleware sets them before the handler runs, on a placeholder response that
 * every answer is then copied into: a Response and its headers made twice per request.)
 */
import { cors } from "hono/cors";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { setAnswerHeaders } from "./response-headers";

const EXPOSED = [
  "X-Request-Id",
  "PAYMENT-REQUIRED",
  "PAYMENT-RESPONSE",
  "X-PAYMENT-RESPONSE",
  "WWW-Authenticate",
  "Retry-After",
  "RateLimit-Limit",
  "RateLimit-Remaining",
  "RateLimit-Reset",
  "Idempotent-Replayed",
  "ETag",
  "Content-Range",
  "Repr-Digest",
];
const preflight = cors({ origin: "*", exposeHeaders: EXPOSED });
const headers = { "Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": EXPOSED.join(",") };

export const corsForAll = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.method === "OPTIONS") {
    const plain = !c.req.header("access-control-request-method");
    // A plain OPTIONS (no preflight) to a public address is the kind's to answer (a bin records it); to the
    // API, the route table's (app.ts: 204 with the path's `Allow`, or 404), with the headers below.
    if (plain && c.req.path.startsWith("/p/")) return next();
    if (!plain || !c.req.path.startsWith("/v1/")) return preflight(c, next);
  }
  await next();
  setAnswerHeaders(c, headers);
});
