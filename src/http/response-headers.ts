/** Headers a middleware adds to the answer once it is made. */
import type { Context } from "hono";
import type { AppEnv } from "../env";

/** Sets them on `c.res`, copying it first when its headers are immutable (a response passed through from fetch). */
export function setAnswerHeaders(c: Context<AppEnv>, headers: Record<string, string>): void {
  try {
    for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
  } catch {
    c.res = new Response(c.res.body, c.res);
    for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
  }
}
