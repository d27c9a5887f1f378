/**
 * The worker's handlers: HTTP, the delivery queue consumer and the daily sweeps (worker.ts adds the Durable Objects for
 * wrangler).
 */
import type { Env } from "./env";
import { buildApp, buildPublicApp } from "./app";
import { sweepTombstones } from "./kind/index-table";
import { consumeDeliveries } from "./delivery/consumer";
import { sweepIdempotencyKeys } from "./http/idempotency";
import { sweepFreeCalls } from "./http/free-tier";
import { sweepAskSalts } from "./ask/privacy";
import { sweepOperatorStats } from "./operator/sweep";
import { sweepEndedBodies } from "./delivery/ended-bodies";

const app = buildApp();
const publicApp = buildPublicApp();

/** Whether the URL's path is below `/p/`, read without parsing the URL (every request asks). */
function isPublic(url: string): boolean {
  const path = url.indexOf("/", url.indexOf("//") + 2);
  return path !== -1 && url.startsWith("/p/", path);
}

export default {
  fetch: (request: Request, env: Env, ctx: ExecutionContext) =>
    (isPublic(request.url) ? publicApp : app).fetch(request, env, ctx),
  queue: consumeDeliveries,
  async scheduled(_controller, env, ctx) {
    const now = Date.now();
    ctx.waitUntil(
      Promise.all([
        sweepTombstones(env.DB, now),
        sweepIdempotencyKeys(env.DB, now),
        sweepFreeCalls(env.DB, now),
        sweepAskSalts(env.DB, now),
        sweepOperatorStats(env.DB, now),
        sweepEndedBodies(env.DB, env.BUCKET, now),
      ]),
    );
  },
} satisfies ExportedHandler<Env>;
