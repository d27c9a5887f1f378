#!/usr/bin/env node
/**
 * Fan-out throughput: messages posted to a fanout's public address, each delivered through the
 * delivery pipeline (queue, consumer, signed request) to a local receiver in this process, under
 * `wrangler dev` on this machine. Measures deliveries per second (first post to last arrival) and
 * the end-to-end latency of each (post sent → delivery received), and checks that a healthy
 * receiver gets every message exactly once (by webhook-id, each signature verified).
 *
 *   npm run bench:fanout                           (2,000 messages, 1 destination, 20 in flight)
 *   BENCH_MESSAGES=500 BENCH_DESTINATIONS=3 BENCH_CONCURRENCY=20 BENCH_TIMEOUT_SECONDS=300 npm run bench:fanout
 *
 * The worker runs from a copy of the source (bench/lib.mjs: `wrangler dev` reloads on a change and
 * would drop the local queue's messages).
 */
import { createServer } from "node:http";
import { Webhook } from "standardwebhooks";
import { startWranglerDev } from "../scripts/wrangler-dev.mjs";
import { buyCredits, log, percentiles, pool, sleep, snapshotSource } from "./lib.mjs";

const env = process.env;
const count = Number(env.BENCH_MESSAGES ?? 2000);
const destinations = Number(env.BENCH_DESTINATIONS ?? 1);
const concurrency = Number(env.BENCH_CONCURRENCY ?? 20);
const timeoutMs = Number(env.BENCH_TIMEOUT_SECONDS ?? 300) * 1000;

let secret = "";
const arrivals = []; // { d, n, webhookId, latency, valid }
const receiver = createServer((req, res) => {
  const t = Date.now();
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const text = Buffer.concat(chunks).toString("utf8");
    let valid = false;
    try {
      valid = new Webhook(secret).verify(text, req.headers) !== undefined;
    } catch {
      valid = false;
    }
    const { n, sent } = JSON.parse(text);
    arrivals.push({ d: req.url, n, webhookId: String(req.headers["webhook-id"]), latency: t - sent, t, valid });
    res.writeHead(200, { "content-type": "text/plain" }).end("ok");
  });
});
await new Promise((r) => receiver.listen(0, "127.0.0.1", r));
const receiverUrl = `http://127.0.0.1:${receiver.address().port}`;

process.chdir(await snapshotSource(env.BENCH_SOURCE ?? "worktree"));
const service = await startWranglerDev({
  rateLimitPerMinute: 1_000_000,
  vars: { X402_SETTLEMENT: "none", ALLOW_PRIVATE_TARGETS: "true" },
});
try {
  const token = await buyCredits(service.url, 10);
  const created = await (
    await fetch(`${service.url}/v1/fanout`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({
        ttl_seconds: 86400,
        destinations: Array.from({ length: destinations }, (_, d) => ({ url: `${receiverUrl}/d${d}` })),
      }),
    })
  ).json();
  secret = created.signing_secret;
  const address = created.urls.public;
  log(`posting ${count} messages to ${destinations} destination(s), ${concurrency} in flight`);
  const started = Date.now();
  let refused = 0;
  await pool(count, concurrency, async (n) => {
    const res = await fetch(address, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ n, sent: Date.now(), pad: "x".repeat(900) }),
    });
    if (res.status !== 200) refused++;
    await res.arrayBuffer();
  });
  const posted = Date.now();
  const expected = (count - refused) * destinations;
  while (arrivals.length < expected && Date.now() - started < timeoutMs) await sleep(200);
  await sleep(2000); // anything arriving twice would arrive now
  const last = Math.max(...arrivals.map((a) => a.t));
  const unique = new Set(arrivals.map((a) => `${a.d} ${a.webhookId}`));
  const perDestination = Array.from(
    { length: destinations },
    (_, d) => new Set(arrivals.filter((a) => a.d === `/d${d}`).map((a) => a.n)).size,
  );
  const lat = percentiles(arrivals.map((a) => a.latency));
  console.log(
    `\n${count} messages × ${destinations} destination(s), ${concurrency} in flight, ${new Date().toISOString()}\n`,
  );
  console.log(
    `posted in ${((posted - started) / 1000).toFixed(1)} s (` +
      `${(count / ((posted - started) / 1000)).toFixed(0)} msg/s), ${refused} refused`,
  );
  console.log(
    `delivered ${arrivals.length} in ${((last - started) / 1000).toFixed(1)} s: ` +
      `${(arrivals.length / ((last - started) / 1000)).toFixed(0)} deliveries/s`,
  );
  console.log(`end-to-end latency: p50 ${lat.p50} ms, p90 ${lat.p90} ms, p99 ${lat.p99} ms, max ${lat.max} ms`);
  console.log(
    `exactly once: ${unique.size} distinct of ${arrivals.length} arrivals (expected ${expected}` +
      `); per destination ${perDestination.join(", ")}; ${arrivals.filter((a) => !a.valid).length}` +
      ` bad signatures`,
  );
} finally {
  await service.stop();
  receiver.close();
}
