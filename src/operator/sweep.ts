/**
 * The daily sweep of the operator's tables, apart from its routes (src/index.ts imports it at start-up; the routes load
 * when first reached).
 */
import { PENDING_WINDOW_MS } from "./delivery-stats";

/** How long a death is remembered (the stats cover 30 days at most). */
const DEAD_KEPT_MS = 90 * 86_400_000;
/** The daily rollup is kept a year and a month, for the operator's own queries past the stats' 30 days. */
const USAGE_KEPT_MS = 400 * 86_400_000;

/**
 * Daily: open rows no attempt has touched within the window (a lost message, not a pending one), old deaths, old daily
 * counts.
 */
export async function sweepOperatorStats(db: D1Database, now: number): Promise<void> {
  await db.batch([
    db.prepare("DELETE FROM deliveries_open WHERE last_at < ?").bind(now - PENDING_WINDOW_MS),
    db.prepare("DELETE FROM deliveries_dead WHERE at < ?").bind(now - DEAD_KEPT_MS),
    db.prepare("DELETE FROM usage_daily WHERE day < ?").bind(new Date(now - USAGE_KEPT_MS).toISOString().slice(0, 10)),
  ]);
}
