/**
 * The anonymous free tier (docs/api.md#rate-limits, seed-spec §5): FREE_CALLS_PER_DAY paid calls per
 * client IP per UTC day that come with no payment at all. 0 (the default) turns it off
 * and then costs nothing: D1 is only touched when the tier is on and a call has no payment.
 *
 * The count is one atomic D1 upsert that refuses to pass the allowance, so concurrent
 * calls from one address can never exceed it; a call that fails gives its unit back
 * (a failed call is never charged, docs/api.md#errors). Only a hash of the address is stored.
 */
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { utcDay } from "../time";
import { clientIp } from "./client-ip";
import { sha256Hex } from "../bytes";

export interface FreeCall {
  /** Owner recorded on what the call creates: stable per address, but a hash, not the address itself. */
  owner: string;
  /** Gives the unit back when the call failed. */
  release(): Promise<void>;
}

/** Claims one free call for this request's address, or null when the tier is off or used up for today. */
export async function claimFreeCall(c: Context<AppEnv>): Promise<FreeCall | null> {
  const allowance = Number(c.env.FREE_CALLS_PER_DAY);
  if (!Number.isInteger(allowance) || allowance <= 0) return null;
  const db = c.env.DB;
  const ipHash = sha256Hex(`free-tier:${clientIp(c)}`).slice(0, 32);
  const day = utcDay(Date.now());
  const claimed = await db
    .prepare(
      `INSERT INTO free_calls (ip_hash, day, calls) VALUES (?1, ?2, 1)
       ON CONFLICT (ip_hash, day) DO UPDATE SET calls = calls + 1 WHERE free_calls.calls < ?3
       RETURNING calls`,
    )
    .bind(ipHash, day, allowance)
    .first<{ calls: number }>();
  if (!claimed) return null;
  return {
    owner: `anon_${ipHash.slice(0, 16)}`,
    release: async () => {
      await db
        .prepare("UPDATE free_calls SET calls = calls - 1 WHERE ip_hash = ? AND day = ? AND calls > 0")
        .bind(ipHash, day)
        .run();
    },
  };
}

/** Daily sweep: yesterday's counts and older are of no use. */
export async function sweepFreeCalls(db: D1Database, now: number): Promise<void> {
  await db.prepare("DELETE FROM free_calls WHERE day < ?").bind(utcDay(now)).run();
}
