/**
 * The baseline for the benchmarks: the same platform work without the product. For
 * bench/counters.mjs one Durable Object per counter, a SQLite UPDATE per increment
 * (`POST /c/{name}`; `POST /l/{name}` also logs a line per request as the service does; `POST /g/{name}` answers
 * from a timer, its increments batched into one commit by the service's own GroupCommit, as the paid calls are); for
 * bench/inboxes.mjs the request's body written as a row (`POST /w/{name}`); for bench/sites.mjs an
 * R2 object read and served (`GET /r2/{key}`, seeded by `PUT /r2/{key}`). No tokens, no billing,
 * no validation. Not part of the service.
 */
import { DurableObject } from "cloudflare:workers";
import { GroupCommit } from "../../durable-objects/resource/transactions";

interface BareEnv {
  COUNTERS: DurableObjectNamespace<BareCounter>;
  BUCKET: R2Bucket;
}

export class BareCounter extends DurableObject<BareEnv> {
  private readonly batches: GroupCommit;

  constructor(ctx: DurableObjectState, env: BareEnv) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS counter (id INTEGER PRIMARY KEY, value INTEGER NOT NULL)");
    ctx.storage.sql.exec("INSERT OR IGNORE INTO counter VALUES (1, 0)");
    ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS item (seq INTEGER PRIMARY KEY AUTOINCREMENT, received_at INTEGER NOT " +
        "NULL, body BLOB NOT NULL)",
    );
    this.batches = new GroupCommit(ctx.storage);
  }

  write(body: ArrayBuffer): number {
    return this.ctx.storage.sql
      .exec<{ seq: number }>("INSERT INTO item (received_at, body) VALUES (?, ?) RETURNING seq", Date.now(), body)
      .one().seq;
  }

  increment(by: number): number {
    return this.ctx.storage.sql
      .exec<{ value: number }>("UPDATE counter SET value = value + ? RETURNING value", by)
      .one().value;
  }

  /**
   * The increment answered as a paid call is: queued for the next timer tick and committed with the calls queued
   * beside it. The reference for the paid increment's tail (bench/README.md, "a like-for-like tail").
   */
  incrementBatched(by: number): Promise<number> {
    return this.batches.run(() => this.increment(by));
  }
}

export default {
  async fetch(request, env) {
    const [, route, name = "default"] = new URL(request.url).pathname.split("/");
    if (route === "r2" && request.method === "PUT") {
      await env.BUCKET.put(name, await request.arrayBuffer(), {
        httpMetadata: { contentType: request.headers.get("content-type") ?? "application/octet-stream" },
      });
      return new Response(null, { status: 204 });
    }
    if (route === "r2") {
      const object = await env.BUCKET.get(name);
      if (!object) return new Response(null, { status: 404 });
      return new Response(object.body, {
        headers: {
          "content-type": object.httpMetadata?.contentType ?? "application/octet-stream",
          etag: object.httpEtag,
        },
      });
    }
    const stub = env.COUNTERS.get(env.COUNTERS.idFromName(name));
    if (route === "g") return Response.json({ value: await stub.incrementBatched(1) });
    if (route === "w") return Response.json({ seq: await stub.write(await request.arrayBuffer()) });
    // The increment with a line logged as the service logs each request (src/operator/request-log.ts): what the line
    // costs under `wrangler dev` (bench/cpu.mjs), where every console.log also travels to wrangler over the inspector.
    if (route === "l") {
      const started = Date.now();
      const value = await stub.increment(1);
      console.log(
        JSON.stringify({
          request_id: `req_${crypto.randomUUID()}`,
          method: request.method,
          route: "/c/:name",
          kind: "counters",
          operation: "increment",
          status: 200,
          charged_micro: 0,
          duration_ms: Date.now() - started,
        }),
      );
      return Response.json({ value });
    }
    return Response.json({ value: await stub.increment(1) });
  },
} satisfies ExportedHandler<BareEnv>;
