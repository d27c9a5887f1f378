/**
 * What the operator watches and does: liveness and readiness (health-routes.ts), the request log line and its counts
 * (request-log.ts, installed by app.ts on both apps), GET /v1/admin/stats, the /admin page, refunds and dead deliveries
 * (admin-actions.ts), and the daily sweep of their tables (sweep.ts). The configuration guard (config-guard.ts) is
 * installed by app.ts.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import { registerAdminActions } from "./admin-actions";
import { registerHealthRoutes } from "./health-routes";
import { registerOperatorPage } from "./page";
import { registerStatsRoute } from "./stats-route";

export { sweepOperatorStats } from "./sweep";

/** Must come after the /v1/admin/* guard is installed (ask/admin.ts). */
export function registerOperator(app: OpenAPIHono<AppEnv>): void {
  registerHealthRoutes(app);
  registerStatsRoute(app);
  registerAdminActions(app);
  registerOperatorPage(app);
}
