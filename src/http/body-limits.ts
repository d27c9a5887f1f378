/**
 * What a /v1 body may be. docs/api.md#requests-and-conventions: JSON bodies up to 1 MiB, unless an operation
 * declares more (`maxBodyBytes`, e.g. a vault value of a full MiB inside its JSON);
 * one middleware chooses the limit by the route the request is for. And a JSON
 * body nests at most MAX_JSON_DEPTH levels below each field (json-depth.ts).
 */
import { bodyLimit } from "hono/body-limit";
import { createMiddleware } from "hono/factory";
import { routePath } from "hono/route";
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { AppError } from "./errors";
import { KIND_CARDS } from "../resources/kinds";
import { deeperThan, MAX_JSON_DEPTH } from "../json";
import { tooDeep } from "./json-depth";

export const MAX_JSON_BYTES = 1024 * 1024;

const limiter = (maxSize: number) =>
  bodyLimit({
    maxSize,
    onError: () => {
      throw new AppError("payload_too_large", `The body of this request is limited to ${maxSize} bytes.`);
    },
  });

/**
 * Operations allowed more than the default, by the route the router matched (`POST /v1/vaults/:id/keys/:key`):
 * the limit is declared on the operation, and found by the router's own match, not by matching paths again here.
 */
const honoPath = (path: string) => path.replace(/\{(\w+)\}/g, ":$1");
const LARGER = new Map(
  KIND_CARDS.flatMap((kind) =>
    kind.ops
      .filter((op) => op.maxBodyBytes)
      .map(
        (op) =>
          [
            `${op.method.toUpperCase()} ${honoPath(`/v1/${kind.kind}/{id}${op.path}`)}`,
            { limit: limiter(op.maxBodyBytes!), raw: Boolean(op.rawBody) },
          ] as const,
      ),
  ),
);
const standard = limiter(MAX_JSON_BYTES);

/** The route that will answer (the last one matched: the middlewares come first). */
const larger = (c: Context<AppEnv>) => LARGER.get(`${c.req.method} ${routePath(c, -1)}`);

/** Whether the request is an upload of raw bytes (streamed through, never read as JSON). */
export const isRawUpload = (c: Context<AppEnv>) => larger(c)?.raw ?? false;

export const apiBodyLimit = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.raw.body === null) return next();
  const route = larger(c);
  // A declared empty body is read at once (Hono keeps it). Without this, a route's media-type check clones
  // the request to read its (empty) stream, on every bodiless POST: a tenth of a paid call's CPU; a copy of
  // the request without its body, the earlier fix, still cost 7% (bench/profile.mjs).
  if (c.req.header("content-length") === "0" && !route?.raw) {
    await c.req.arrayBuffer();
    return next();
  }
  return (route?.limit ?? standard)(c, next);
});

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\b/i;

/** For /v1: a JSON body's fields may each nest MAX_JSON_DEPTH levels (the body itself is one more). */
export const jsonDepthLimit = createMiddleware<AppEnv>(async (c, next) => {
  if ((c.req.method === "POST" || c.req.method === "PUT" || c.req.method === "PATCH") && !isRawUpload(c)) {
    if (JSON_TYPE.test(c.req.header("content-type") ?? "")) {
      // Hono keeps the parsed body, so the validator after this reads it again for free; a body that
      // does not parse is left to the validator's 400.
      const body = await c.req.json().catch(() => undefined);
      const deep = body === undefined ? null : deeperThan(body, MAX_JSON_DEPTH + 1);
      if (deep) throw tooDeep(deep);
    }
  }
  return next();
});
