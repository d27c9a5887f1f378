/** The service's own addresses: configured, or derived from the request for local development. */
import type { Context } from "hono";
import type { AppEnv } from "../env";

export interface Urls {
  baseUrl: string;
  authUrl: string;
}

export function serviceUrls(c: Context<AppEnv>): Urls {
  const origin = new URL(c.req.url).origin;
  const baseUrl = c.env.BASE_URL || origin;
  return { baseUrl, authUrl: c.env.AUTH_URL || baseUrl };
}
