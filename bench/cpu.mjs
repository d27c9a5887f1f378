#!/usr/bin/env node
/**
 * CPU time per request, per process, for the four targets of bench/counters.mjs: what a request costs rather
 * than how many fit in a second, so it can be measured on a machine shared with other work (throughput there
 * moves with the neighbours; CPU per request far less). Each target gets a fixed number of requests at a fixed
 * offered rate below saturation, and the utime + stime (`/proc/<pid>/stat`) of every process of its
 * `wrangler dev` is read before and after: the runtime's workerd (the worker and its Durable Objects),
 * wrangler's proxy workerd, and wrangler's node process. Targets alternate for a few rounds; medians shown.
 *
 *   npm run bench:cpu                              (3,000 requests per target and round, 250 req/s, 3 rounds)
 *   BENCH_REQUESTS=8000 BENCH_RATE=400 BENCH_ROUNDS=5 npm run bench:cpu
 *   BENCH_DIRECT=1 npm run bench:cpu               (at each runtime's own address, past wrangler's proxy)
 */
import { readFile } from "node:fs/promises";
import { loadavg } from "node:os";
import autocannon from "autocannon";
import { descendants, startWranglerDev } from "../scripts/wrangler-dev.mjs";
import { buyCredits, postJson } from "./lib.mjs";

const requests = Number(process.env.BENCH_REQUESTS ?? 3000);
const rate = Number(process.env.BENCH_RATE ?? 250);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 20);
const direct = process.env.BENCH_DIRECT === "1";
const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** utime + stime of a process, in ticks. */
async function ticks(pid) {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

/** The processes of one `wrangler dev`, named by role: the runtime's workerd, the proxy's workerd, wrangler. */
async function roles(dev) {
  const below = await descendants(dev.pid);
  const workerds = below.filter((p) => /(^|\/)workerd$/.test(p.args[0] ?? ""));
  const runtime = workerds.find((p) => p.args.join(" ").includes("entry=127.0.0.1:0 "));
  const proxy = workerds.find((p) => p !== runtime);
  if (!runtime || !proxy) throw new Error(`workerds not found under ${dev.pid}: ${JSON.stringify(workerds)}`);
  // npx's wrapper starts wrangler's own node process as a child: the one whose command line names cli.js.
  const wrangler = below.find((p) => /(^|\/)node$/.test(p.args[0] ?? "") && p.args.join(" ").includes("wrangler-dist"));
  return { runtime: runtime.pid, proxy: proxy.pid, wrangler: wrangler?.pid ?? dev.pid };
}

const service = await startWranglerDev({ rateLimitPerMinute: 1_000_000 });
const bare = await startWranglerDev({ config: "bench/bare/wrangler.toml" });
try {
  const serviceUrl = (direct && (await service.runtimeUrl())) || service.url;
  const bareUrl = (direct && (await bare.runtimeUrl())) || bare.url;
  const token = await buyCredits(service.url, 1000);
  const counter = await postJson(
    `${serviceUrl}/v1/counters`,
    { ttl_seconds: 86400 },
    { authorization: `Bearer ${token}` },
  );
  const manage = { authorization: `Bearer ${counter.management_token}` };
  const paid = { ...manage, "x-credit-token": token };
  const serviceProcs = await roles(service);
  const bareProcs = await roles(bare);
  const targets = [
    { title: "bare increment", method: "POST", url: `${bareUrl}/c/bench`, headers: {}, procs: bareProcs },
    // The same, sent the paid call's two tokens (which it ignores): what carrying them costs the dev proxy.
    { title: "bare, paid headers", method: "POST", url: `${bareUrl}/c/bench`, headers: paid, procs: bareProcs },
    // The same, logging a line per request as the service does: what the request log costs under `wrangler dev`.
    { title: "bare, a log line", method: "POST", url: `${bareUrl}/l/bench`, headers: {}, procs: bareProcs },
    {
      title: "free read",
      method: "GET",
      url: `${serviceUrl}/v1/resources/${counter.id}`,
      headers: manage,
      procs: serviceProcs,
    },
    {
      title: "paid increment",
      method: "POST",
      url: `${serviceUrl}/v1/counters/${counter.id}/increment`,
      headers: paid,
      procs: serviceProcs,
    },
    {
      title: "paid read",
      method: "GET",
      url: `${serviceUrl}/v1/counters/${counter.id}`,
      headers: paid,
      procs: serviceProcs,
    },
  ];
  // Warm-up: each target's code compiled and optimised, each object awake.
  for (const t of targets) await autocannon({ ...t, connections, amount: 1000 });

  const results = new Map(targets.map((t) => [t.title, []]));
  for (let round = 0; round < rounds; round++) {
    for (const t of targets) {
      const names = Object.keys(t.procs);
      const before = await Promise.all(names.map((n) => ticks(t.procs[n])));
      const r = await autocannon({ ...t, connections, amount: requests, overallRate: rate });
      const after = await Promise.all(names.map((n) => ticks(t.procs[n])));
      const answered = r.requests.total;
      const non2xx = r.non2xx + r.errors + r.timeouts;
      const ms = Object.fromEntries(
        names.map((n, i) => [n, ((after[i] - before[i]) / TICKS_PER_SECOND / answered) * 1000]),
      );
      const total = ms.runtime + ms.proxy + ms.wrangler;
      results.get(t.title).push({ ...ms, total, non2xx, p50: r.latency.p50, p99: r.latency.p99 });
      console.error(
        `round ${round + 1} ${t.title}: ${answered} answers (${non2xx} non-2xx), runtime ` +
          `${ms.runtime.toFixed(3)} ms, proxy ${ms.proxy.toFixed(3)} ms, wrangler ${ms.wrangler.toFixed(3)}` +
          ` ms CPU per request`,
      );
    }
  }
  // The middle round (of an even number, the upper of the two middle ones).
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const cell = (runs, key) =>
    `${median(runs.map((r) => r[key])).toFixed(3)} (${runs.map((r) => r[key].toFixed(2)).join(", ")})`;
  const bareRuntime = median(results.get("bare increment").map((r) => r.runtime));
  const route = direct ? "direct" : "through the proxy";
  const loadAverage = loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");
  console.log(
    `\nCPU per request, ms (median of ${rounds} rounds, each ${requests} requests at ${rate} req/s, ` +
      `${connections} connections, ${route}; load average ${loadAverage}):\n`,
  );
  console.log(
    "| target | runtime workerd | × bare | proxy workerd | wrangler (node) | all three | non-2xx " +
      "|\n|---|---|---|---|---|---|---|",
  );
  for (const [title, runs] of results)
    console.log(
      `| ${title} | ${cell(runs, "runtime")} | ` +
        `${(median(runs.map((r) => r.runtime)) / bareRuntime).toFixed(2)}× | ${cell(runs, "proxy")} | ` +
        `${cell(runs, "wrangler")} | ${cell(runs, "total")} | ${runs.reduce((n, r) => n + r.non2xx, 0)} |`,
    );
} finally {
  await service.stop();
  await bare.stop();
}
