/** Worker entry: HTTP, the delivery queue consumer and the daily sweep; re-exports the Durable Objects. */
import type { Env } from "./env";
import { buildApp } from "./app";
import { sweepTombstones } from "./resources/index-table";
import { consumeDeliveries } from "./delivery/consumer";

export { AccountObject } from "../durable-objects/AccountObject";
export { ResourceObject } from "../durable-objects/ResourceObject";

const app = buildApp();

export default {
  fetch: app.fetch,
  queue: consumeDeliveries,
  async scheduled(_controller, env, ctx) {
    ctx.waitUntil(sweepTombstones(env.DB, Date.now()));
  },
} satisfies ExportedHandler<Env>;
