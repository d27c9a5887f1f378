/** The worker's handlers: HTTP, the delivery queue consumer and the daily sweeps (worker.ts adds the Durable Objects for wrangler). */
import type { Env } from "./env";
import { buildApp } from "./app";
import { sweepTombstones } from "./resources/index-table";
import { consumeDeliveries } from "./delivery/consumer";
import { sweepIdempotencyKeys } from "./http/idempotency";
import { sweepFreeCalls } from "./http/free-tier";
import { sweepAskSalts } from "./ask";

const app = buildApp();

export default {
  fetch: app.fetch,
  queue: consumeDeliveries,
  async scheduled(_controller, env, ctx) {
    const now = Date.now();
    ctx.waitUntil(Promise.all([sweepTombstones(env.DB, now), sweepIdempotencyKeys(env.DB, now), sweepFreeCalls(env.DB, now), sweepAskSalts(env.DB, now)]));
  },
} satisfies ExportedHandler<Env>;
