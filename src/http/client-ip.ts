/**
 * The client address as the rate limits, the free tier and anonymous idempotency keys count it.
 * CF-Connecting-IP is set by Cloudflare's edge (a client cannot forge it there); without it
 * (local tools, tests) every caller shares one "unknown" bucket.
 */
import type { Context } from "hono";
import type { AppEnv } from "../env";

export function clientIp(c: Context<AppEnv>): string {
  return addressBucket(c.req.header("CF-Connecting-IP")) ?? "unknown";
}

/**
 * The unit a client address is counted in (an IPv4 address, an IPv6 /64), or null without one: also for a kind that
 * keeps its own per-address count from the address a public request carries (forms).
 */
export function addressBucket(address: string | null | undefined): string | null {
  const raw = address?.trim();
  if (!raw) return null;
  return raw.includes(":") ? ipv6Bucket(raw) : raw;
}

/**
 * One IPv6 subscriber usually holds a whole /64: counting single addresses would let it
 * rotate through 2^64 of them, so the /64 is the unit. IPv4-mapped addresses count as IPv4.
 */
function ipv6Bucket(address: string): string {
  const lower = address.toLowerCase();
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(lower);
  if (mapped?.[1]) return mapped[1];
  const [head = "", tail] = lower.split("::", 2);
  const headGroups = head ? head.split(":") : [];
  const tailGroups = tail ? tail.split(":") : [];
  const zeros =
    tail === undefined ? [] : Array.from({ length: Math.max(0, 8 - headGroups.length - tailGroups.length) }, () => "0");
  const groups = [...headGroups, ...zeros, ...tailGroups].slice(0, 4).map((g) => g.replace(/^0+(?=.)/, ""));
  return `${groups.join(":")}::/64`;
}
