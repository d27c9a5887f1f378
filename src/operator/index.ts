/**
 * What the operator watches: liveness and readiness (health-routes.ts), the request log line and its
 * counts (request-log.ts, installed by app.ts on both apps), GET /v1/admin/stats, the /admin page, and
 * the daily sweep of their tables. The configuration guard (config-guard.ts) is installed by app.ts.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import { PENDING_WINDOW_MS } from "./delivery-stats";
import { registerHealthRoutes } from "./health-routes";
import { registerOperatorPage } from "./page";
import { registerStatsRoute } from "./stats-route";

/** How long a death is remembered (the stats cover 30 days at most). */
const DEAD_KEPT_MS = 90 * 86_400_000;
/** The daily rollup is kept a year and a month, for the operator's own queries past the stats' 30 days. */
const USAGE_KEPT_MS = 400 * 86_400_000;

/** Must come after the /v1/admin/* guard is installed (ask/admin.ts). */
export function registerOperator(app: OpenAPIHono<AppEnv>): void {
  registerHealthRoutes(app);
  registerStatsRoute(app);
  registerOperatorPage(app);
}

/** Daily: open rows no attempt has touched within the window (a lost message, not a pending one), old deaths, old daily counts. */
export async function sweepOperatorStats(db: D1Database, now: number): Promise<void> {
  await db.batch([
    db.prepare("DELETE FROM deliveries_open WHERE last_at < ?").bind(now - PENDING_WINDOW_MS),
    db.prepare("DELETE FROM deliveries_dead WHERE at < ?").bind(now - DEAD_KEPT_MS),
    db.prepare("DELETE FROM usage_daily WHERE day < ?").bind(new Date(now - USAGE_KEPT_MS).toISOString().slice(0, 10)),
  ]);
}
