/**
 * `GET /v1/admin/stats`: the operator's figures, behind the /v1/admin/* guard (ask/admin.ts), documented like its other
 * routes.
 */
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import { errorResponses, jsonResponse } from "../openapi/responses";
import { statsAnswer, statsQuery } from "./stats-schema";
import { readStats } from "./stats-store";
import { flushNow, flushSeconds } from "./usage-counters";

const DESCRIPTION = `Revenue by day (x402 payments settled), calls, refusals (4xx) and errors (5xx) and the µUSD \
charged, by day and by kind, active resources by kind, and deliveries pending and dead, read from the service's own \
tables.

Calls are counted per isolate in memory and written to D1 at most every \`STATS_FLUSH_SECONDS\`: this answer \
includes its own isolate's counts, others may lag by that much (an isolate evicted before it wrote loses at most \
that much). A browser may send the operator token as HTTP Basic's password (any user name) on this read: that is how \
the operator page at \`/admin\` fetches it.`;

export function registerStatsRoute(app: OpenAPIHono<AppEnv>): void {
  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/admin/stats",
      operationId: "admin_stats",
      tags: ["Ask"],
      security: [{ admin: [] }],
      summary: "Operator: revenue, calls, errors, resources and deliveries",
      description: DESCRIPTION,
      request: { query: statsQuery },
      responses: {
        200: jsonResponse("The figures of the period.", statsAnswer),
        ...errorResponses([401, 403, 404, 422]),
      },
    }),
    async (c) => {
      const { days } = c.req.valid("query");
      await flushNow(c.env.DB);
      return c.json(await readStats(c.env.DB, Date.now(), days, flushSeconds(c.env)), 200);
    },
  );
}
