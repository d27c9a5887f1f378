/**
 * The operator token as a request presents it: `Authorization: Bearer …`, or, from a browser on
 * the operator page, as HTTP Basic's password (any user name). A browser that holds a Basic
 * credential sends it with every request to this origin, another site's forms included, so Basic
 * is taken for reads (GET, HEAD) only: no cross-site request can change anything with it.
 */
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { AppError } from "../http/errors";
import { bearer } from "../auth/credentials";

const BASIC = /^Basic\s+([A-Za-z0-9+/]+={0,2})\s*$/i;

/** The password of a Basic credential (RFC 7617, UTF-8); "" when it is not one, which matches no token. */
function basicPassword(encoded: string): string {
  try {
    const text = new TextDecoder().decode(Uint8Array.from(atob(encoded), (ch) => ch.charCodeAt(0)));
    const colon = text.indexOf(":");
    return colon === -1 ? "" : text.slice(colon + 1);
  } catch {
    return "";
  }
}

/** Null when the request carries no Authorization header; `challenge` goes with a refusal of Basic on a write. */
export function operatorToken(c: Context<AppEnv>, challenge: string): string | null {
  const basic = BASIC.exec(c.req.header("Authorization") ?? "");
  if (!basic) return bearer(c);
  if (c.req.method !== "GET" && c.req.method !== "HEAD") {
    throw new AppError(
      "unauthorized",
      "HTTP Basic is taken for reads only: send the operator token as `Authorization: Bearer …`.",
      { headers: { "WWW-Authenticate": challenge } },
    );
  }
  return basicPassword(basic[1]!);
}
