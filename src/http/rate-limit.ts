/**
 * Rate limits per client IP and per presented credential (docs/api.md#rate-limits), and per public
 * address for all its callers together (§12), on the Workers Rate Limiting bindings: no D1
 * and no Durable Object of ours on the hot path, the bindings asked in parallel.
 *
 * The credential key is a hash of the credential as presented, never an id read out of
 * it: a forged token that names a victim's account lands in its own bucket, so nobody
 * can spend someone else's limit without holding their token. Forging many tokens buys
 * many buckets, which is why every call also counts against its IP.
 *
 * The binding only answers allowed / refused, so the RateLimit-* headers (IETF
 * draft-ietf-httpapi-ratelimit-headers) are best-effort, as the draft allows:
 * - Limit: the configured limit (RATE_LIMIT_PER_MINUTE / IP_RATE_LIMIT_PER_MINUTE,
 *   which must repeat the [[ratelimits]] settings: a binding cannot be asked for them);
 * - Remaining: the limit minus what this isolate has counted for the key in the current
 *   window, 0 once refused. Other isolates and locations count too, so the true
 *   remaining can be lower: it is an upper bound, never a promise;
 * - Reset: seconds until the current 60 s window ends (windows are aligned to the clock).
 * Of the two policies, the one with less remaining is shown, as the draft recommends.
 */
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { AppError } from "./errors";
import { clientIp } from "./client-ip";
import { hashToken } from "../auth/tokens";
import { setAnswerHeaders } from "./response-headers";

const PERIOD_SECONDS = 60;
/** Keys tracked per isolate and window; past this the counts of new keys are not kept (memory stays bounded). */
const MAX_TRACKED_KEYS = 50_000;

interface Policy {
  name: "credential" | "ip" | "ask" | "address";
  binding: RateLimit;
  limit: number;
  key: string;
}

interface Outcome {
  policy: Policy;
  allowed: boolean;
  remaining: number;
}

/** This isolate's counts in the current window: the best a binding that only says yes or no allows. */
const counts = new Map<string, number>();
let countsWindow = -1;

function countLocally(key: string, now: number): number {
  const window = Math.floor(now / (PERIOD_SECONDS * 1000));
  if (window !== countsWindow) {
    counts.clear();
    countsWindow = window;
  }
  const seen = counts.get(key);
  if (seen === undefined && counts.size >= MAX_TRACKED_KEYS) return 1;
  const next = (seen ?? 0) + 1;
  counts.set(key, next);
  return next;
}

/** The paying credential if there is one (it names the account that spends), else the bearer. */
function presentedCredential(c: Context<AppEnv>): string | null {
  const credit = c.req.header("X-CREDIT-TOKEN")?.trim();
  if (credit) return credit;
  const authorization = c.req.header("Authorization")?.trim();
  if (!authorization) return null;
  return /^Bearer\s+(\S+)$/i.exec(authorization)?.[1] ?? authorization;
}

/** Free writes anyone may make: a much tighter per-address limit, so they cannot fill the database. */
const ASK_WRITES = new Set(["/v1/feature-requests", "/v1/abuse-reports", "/v1/sandboxes"]);

function policiesOf(c: Context<AppEnv>): Policy[] {
  const policies: Policy[] = [
    {
      name: "ip",
      binding: c.env.IP_RATE_LIMITER,
      limit: Number(c.env.IP_RATE_LIMIT_PER_MINUTE),
      key: `ip:${clientIp(c)}`,
    },
  ];
  const path = c.req.path;
  if (c.req.method === "POST" && ASK_WRITES.has(path)) {
    policies.push({
      name: "ask",
      binding: c.env.ASK_RATE_LIMITER,
      limit: Number(c.env.ASK_RATE_LIMIT_PER_MINUTE),
      key: `ask:${clientIp(c)}`,
    });
  }
  // A public address is also limited for all its callers together: a flood from many addresses still stops there.
  const address = /^\/p\/([^/]+)/.exec(path)?.[1];
  if (address) {
    policies.push({
      name: "address",
      binding: c.env.ADDRESS_RATE_LIMITER,
      limit: Number(c.env.ADDRESS_RATE_LIMIT_PER_MINUTE),
      key: `addr:${address}`,
    });
  }
  const credential = presentedCredential(c);
  if (credential) {
    policies.push({
      name: "credential",
      binding: c.env.RATE_LIMITER,
      limit: Number(c.env.RATE_LIMIT_PER_MINUTE),
      key: `cred:${hashToken(credential).slice(0, 32)}`,
    });
  }
  return policies;
}

async function check(policy: Policy, now: number): Promise<Outcome> {
  let allowed: boolean;
  try {
    allowed = (await policy.binding.limit({ key: policy.key })).success;
  } catch (err) {
    // Fail open: an unavailable limiter must not take the paid API down with it.
    console.error(`rate limiter ${policy.name} unavailable`, err);
    allowed = true;
  }
  const remaining = allowed ? Math.max(0, policy.limit - countLocally(policy.key, now)) : 0;
  return { policy, allowed, remaining };
}

function secondsToReset(now: number): number {
  const periodMs = PERIOD_SECONDS * 1000;
  return Math.max(1, Math.ceil((periodMs - (now % periodMs)) / 1000));
}

function headersOf(outcome: Outcome, reset: number): Record<string, string> {
  return {
    "RateLimit-Limit": String(outcome.policy.limit),
    "RateLimit-Remaining": String(outcome.remaining),
    "RateLimit-Reset": String(reset),
  };
}

/**
 * Requests the worker makes to itself (an MCP tool calling its REST route) were counted where
 * they came in; the caller marks them here so they are not counted twice. Object identity
 * cannot be forged from outside the isolate, unlike a header.
 */
const internalRequests = new WeakSet<Request>();

export function countedAtEntry(request: Request): Request {
  internalRequests.add(request);
  return request;
}

export const rateLimit = createMiddleware<AppEnv>(async (c, next) => {
  // Checked before any middleware could replace c.req.raw (rateLimit runs first on API paths).
  if (internalRequests.has(c.req.raw)) return next();
  const now = Date.now();
  const outcomes = await Promise.all(policiesOf(c).map((p) => check(p, now)));
  const reset = secondsToReset(now);
  const refused = outcomes.find((o) => !o.allowed);
  if (refused) {
    const who = {
      credential: "from this credential",
      ip: "from this client address",
      ask: "from this client address",
      address: "to this address",
    }[refused.policy.name];
    throw new AppError(
      "rate_limited",
      `Too many requests ${who}: at most ${refused.policy.limit} a minute. Retry after ${reset} s.`,
      {
        headers: { ...headersOf(refused, reset), "Retry-After": String(reset) },
      },
    );
  }
  const shown = outcomes.reduce((low, o) => (o.remaining < low.remaining ? o : low));
  await next();
  setAnswerHeaders(c, headersOf(shown, reset));
});
