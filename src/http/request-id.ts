/** Gives every request an id, echoed in X-Request-Id and in every problem body. */
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { randomId } from "../auth/ids";
import { setAnswerHeaders } from "./response-headers";

export const requestId = createMiddleware<AppEnv>(async (c, next) => {
  const id = randomId("req_");
  c.set("requestId", id);
  await next();
  setAnswerHeaders(c, { "X-Request-Id": id });
});
