/**
 * API.md §3: JSON bodies up to 1 MiB, unless an operation declares more
 * (`maxBodyBytes`, e.g. a vault value of a full MiB inside its JSON). One
 * middleware for all of /v1, choosing the limit by the route the request is for.
 */
import { bodyLimit } from "hono/body-limit";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { AppError } from "./errors";
import { KINDS } from "../resources/registry";

export const MAX_JSON_BYTES = 1024 * 1024;

const limiter = (maxSize: number) =>
  bodyLimit({ maxSize, onError: () => { throw new AppError("payload_too_large", `The body of this request is limited to ${maxSize} bytes.`); } });

/** [method, path pattern, limit] of every operation allowed more than the default. */
const LARGER = KINDS.flatMap((kind) =>
  kind.ops
    .filter((op) => op.maxBodyBytes)
    .map((op) => {
      const pattern = `/v1/${kind.kind}/{id}${op.path}`.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{\w+\}/g, "[^/]+");
      return { method: op.method.toUpperCase(), re: new RegExp(`^${pattern}$`), limit: limiter(op.maxBodyBytes!) };
    }),
);
const standard = limiter(MAX_JSON_BYTES);

export const apiBodyLimit = createMiddleware<AppEnv>(async (c, next) => {
  const path = new URL(c.req.url).pathname;
  const larger = LARGER.find((l) => l.method === c.req.method && l.re.test(path));
  return (larger?.limit ?? standard)(c, next);
});
