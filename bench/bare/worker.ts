/**
 * The baseline for bench/counters.mjs: the same platform work without the
 * product — one Durable Object per counter, a SQLite UPDATE per increment, no
 * tokens, no billing, no validation. Not part of the service.
 */
import { DurableObject } from "cloudflare:workers";

interface BareEnv {
  COUNTERS: DurableObjectNamespace<BareCounter>;
}

export class BareCounter extends DurableObject<BareEnv> {
  constructor(ctx: DurableObjectState, env: BareEnv) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS counter (id INTEGER PRIMARY KEY, value INTEGER NOT NULL)");
    ctx.storage.sql.exec("INSERT OR IGNORE INTO counter VALUES (1, 0)");
  }

  increment(by: number): number {
    return this.ctx.storage.sql.exec<{ value: number }>("UPDATE counter SET value = value + ? RETURNING value", by).one().value;
  }
}

export default {
  async fetch(request, env) {
    const name = new URL(request.url).pathname.split("/")[2] ?? "default";
    const value = await env.COUNTERS.get(env.COUNTERS.idFromName(name)).increment(1);
    return Response.json({ value });
  },
} satisfies ExportedHandler<BareEnv>;
