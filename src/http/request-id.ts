/** Gives every request an id, echoed in X-Request-Id and in every problem body. */
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { randomId } from "../auth/ids";

export const requestId = createMiddleware<AppEnv>(async (c, next) => {
  const id = randomId("req_");
  c.set("requestId", id);
  await next();
  c.res.headers.set("X-Request-Id", id);
});
