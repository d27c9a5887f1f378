/**
 * One case per channel: a URL in its grammar, and the request its provider's documentation
 * specifies for the test message (notify.test.ts sends it). Providers' HTTPS endpoints reach the
 * local receiver at /provider/notify/{host}{path} (NOTIFY_TEST_ORIGIN); self-hosted ones are given
 * the receiver's own address (`${H}`). Each case's credentials are unique, so its request is
 * found in the shared log by its path, or by a `find` string in its body.
 */
import { env } from "cloudflare:test";

/** The receiver's host:port, for self-hosted services. */
export const H = new URL(env.TEST_RECEIVER_URL).host;
/** Where self-hosted services' paths start, so the receiver logs them under "notify" too. */
export const P = "provider/notify/self";

/** The message every case is sent. */
export const MESSAGE = {
  title: "Disk almost full",
  body: "**92%** used on db-1",
  format: "markdown",
  priority: "high",
  tags: ["warning"],
} as const;
export const TEXT = "92% used on db-1";

export interface Expected {
  method?: string;
  /** The request's path and query as the receiver saw it, less `/provider/notify`. */
  path: string;
  /** Header values that matter (auth), lower-case names; a RegExp matches. */
  headers?: Record<string, string | RegExp>;
  /** The body: JSON (compared as a subset, arrays whole), form fields, or text (a RegExp matches). */
  json?: unknown;
  form?: Record<string, string>;
  text?: string | RegExp;
  /**
   * Picks this request among several to one path (other tests send there too): a string its headers or body contain.
   */
  find?: string;
}

export interface Case {
  name: string;
  url: string;
  expect: Expected | Expected[];
}
