/**
 * One structured line per request, on both apps (app.ts greet): request id, method, route pattern,
 * kind, operation, status, µUSD charged, duration. Never a token, a query string or a body: the
 * route is the pattern that answered, not the path. The same figures go to Workers Analytics
 * Engine when the ANALYTICS binding is configured, and into this isolate's daily counts
 * (usage-counters.ts). On the hot path: one small JSON string, one console.log, no awaited I/O.
 *
 * REQUEST_LOG=failures keeps the line for answers other than 2xx/3xx and slow ones only: a busy deployment pays per
 * log event, and its counts are complete without them. Locally it matters more: `wrangler dev` carries each line over
 * the inspector to its own process, which costs a saturated worker about a third of its throughput (bench/README.md).
 */
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { requestFacts } from "./request-facts";
import { countRequest, type WaitUntil } from "./usage-counters";

function executionCtx(c: Context<AppEnv>): WaitUntil | undefined {
  try {
    return c.executionCtx;
  } catch {
    return undefined; // Hono throws when the runtime gave none (app.request in a test)
  }
}

/** Under REQUEST_LOG=failures, an answer at least this slow is logged although it succeeded. */
export const SLOW_REQUEST_MS = 1000;

function report(c: Context<AppEnv>, started: number): void {
  const now = Date.now();
  const facts = requestFacts(c);
  const status = c.res.status;
  // A call answered otherwise than 2xx is never charged (docs/api.md#errors), whatever it reached.
  const chargedMicro = status >= 200 && status < 300 ? (c.get("charged")?.micro ?? 0) : 0;
  // Wall time to the answer (a streamed body may flow on after it); Workers' clock moves with I/O only.
  const durationMs = now - started;
  const logged = c.env.REQUEST_LOG !== "failures" || status >= 400 || durationMs >= SLOW_REQUEST_MS;
  if (logged)
    console.log(
      JSON.stringify({
        request_id: c.get("requestId"),
        method: c.req.method,
        route: facts.route,
        kind: facts.kind,
        operation: facts.operation,
        status,
        charged_micro: chargedMicro,
        duration_ms: durationMs,
      }),
    );
  // Documented in docs/operations.md ("Watching it"): keep the positions stable, queries read them by number.
  c.env.ANALYTICS?.writeDataPoint({
    indexes: [facts.kind ?? ""],
    blobs: [
      facts.route ?? "",
      facts.kind ?? "",
      facts.operation ?? "",
      `${Math.floor(status / 100)}xx`,
      c.req.method,
      facts.isPublic ? "public" : "api",
    ],
    doubles: [chargedMicro, durationMs, 1, status],
  });
  countRequest(c.env, executionCtx(c), { kind: facts.kind, status, chargedMicro, isPublic: facts.isPublic }, now);
}

export const requestLog = createMiddleware<AppEnv>(async (c, next) => {
  const started = Date.now();
  await next();
  try {
    report(c, started);
  } catch (err) {
    // Watching must never break what is watched.
    console.error(`[${c.get("requestId")}] request not logged`, err);
  }
});
