/**
 * The daily rollup behind the operator's figures (D1 `usage_daily`). Each isolate counts its
 * requests in memory and adds them to D1 in one batched upsert, from waitUntil, at most every
 * STATS_FLUSH_SECONDS: a request never waits for, nor pays for, a D1 write of its own. The price
 * of that: the counts an isolate holds when it is evicted are lost (at most one interval's worth),
 * and other isolates' figures lag by up to one interval (the stats endpoint flushes its own first).
 */
import type { Env } from "../env";

interface Tally {
  day: string;
  /** '' for a request about no kind (prices, credits, the operator's own): D1 keys cannot be NULL. */
  kind: string;
  calls: number;
  refused: number;
  errors: number;
  chargedMicro: number;
  publicRequests: number;
  publicErrors: number;
}

export interface Counted {
  kind: string | null;
  status: number;
  chargedMicro: number;
  isPublic: boolean;
}

const DAY_MS = 86_400_000;

/** The part of an execution context a flush needs: work that outlives the answer. */
export interface WaitUntil {
  waitUntil(promise: Promise<unknown>): void;
}
const DEFAULT_FLUSH_SECONDS = 10;

let pending = new Map<string, Tally>();
let lastFlushAt = 0;
/** The lastFlushAt a timer is armed for, so one request in an interval arms it, not every one. */
let timerFor: number | null = null;
const inFlight = new Set<Promise<void>>();

let dayNumber = -1;
let dayText = "";

/** The UTC day of `now` as YYYY-MM-DD, made once a day rather than once a request. */
export function utcDay(now: number): string {
  const n = Math.floor(now / DAY_MS);
  if (n !== dayNumber) {
    dayNumber = n;
    dayText = new Date(n * DAY_MS).toISOString().slice(0, 10);
  }
  return dayText;
}

export function flushSeconds(env: Pick<Env, "STATS_FLUSH_SECONDS">): number {
  const n = Number(env.STATS_FLUSH_SECONDS ?? DEFAULT_FLUSH_SECONDS);
  return Number.isFinite(n) && n >= 0 ? n : DEFAULT_FLUSH_SECONDS;
}

function tallyOf(map: Map<string, Tally>, day: string, kind: string): Tally {
  const key = `${day}|${kind}`;
  let tally = map.get(key);
  if (!tally) {
    tally = { day, kind, calls: 0, refused: 0, errors: 0, chargedMicro: 0, publicRequests: 0, publicErrors: 0 };
    map.set(key, tally);
  }
  return tally;
}

/** Counts one answered request; `ctx` (absent under app.request) carries the flush past the answer. */
export function countRequest(env: Env, ctx: WaitUntil | undefined, request: Counted, now: number): void {
  const tally = tallyOf(pending, utcDay(now), request.kind ?? "");
  if (request.isPublic) {
    tally.publicRequests += 1;
    if (request.status >= 500) tally.publicErrors += 1;
  } else {
    tally.calls += 1;
    if (request.status >= 500) tally.errors += 1;
    else if (request.status >= 400) tally.refused += 1;
    tally.chargedMicro += request.chargedMicro;
  }
  if (ctx) scheduleFlush(env.DB, ctx, flushSeconds(env) * 1000, now);
}

function scheduleFlush(db: D1Database, ctx: WaitUntil, intervalMs: number, now: number): void {
  const due = lastFlushAt + intervalMs;
  if (now >= due) {
    ctx.waitUntil(flush(db));
    return;
  }
  // This isolate may get no other request for a while: a timer writes what it holds once the interval is
  // up (waitUntil keeps it running up to 30 s past the answer; if it is cut short, the next request flushes).
  if (timerFor === lastFlushAt) return;
  timerFor = lastFlushAt;
  ctx.waitUntil(new Promise((resolve) => setTimeout(resolve, due - now)).then(() => flush(db)));
}

const UPSERT = `INSERT INTO usage_daily
  (day, kind, calls, refused, errors, charged_micro, public_requests, public_errors)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (day, kind) DO UPDATE SET calls = calls + excluded.calls, refused = refused + excluded.refused,
  errors = errors + excluded.errors, charged_micro = charged_micro + excluded.charged_micro,
  public_requests = public_requests + excluded.public_requests, public_errors = public_errors + excluded.public_errors`;

/** Writes what this isolate has counted, in one batch; on failure the counts wait for the next flush. */
export function flush(db: D1Database): Promise<void> {
  if (pending.size === 0) return Promise.resolve();
  const taken = pending;
  pending = new Map();
  lastFlushAt = Date.now();
  const statements = [...taken.values()].map((t) =>
    db
      .prepare(UPSERT)
      .bind(t.day, t.kind, t.calls, t.refused, t.errors, t.chargedMicro, t.publicRequests, t.publicErrors),
  );
  const written: Promise<void> = db
    .batch(statements)
    .then(() => undefined)
    .catch((err: unknown) => {
      console.error("usage counts not written to D1; kept for the next flush", err);
      for (const t of taken.values()) {
        const into = tallyOf(pending, t.day, t.kind);
        into.calls += t.calls;
        into.refused += t.refused;
        into.errors += t.errors;
        into.chargedMicro += t.chargedMicro;
        into.publicRequests += t.publicRequests;
        into.publicErrors += t.publicErrors;
      }
    })
    .finally(() => inFlight.delete(written));
  inFlight.add(written);
  return written;
}

/** Waits for this isolate's flushes under way, then writes what is left: the figures that follow include it. */
export async function flushNow(db: D1Database): Promise<void> {
  await Promise.all([...inFlight]);
  await flush(db);
}
