#!/usr/bin/env node
/**
 * Paid counter increments vs a bare Durable Object counter, and a paid read vs the same read
 * free (a resource's record with its management token), all under `wrangler dev` on this
 * machine, measured with autocannon in the same run, targets alternated round by round.
 *
 *   npm run bench                       (defaults: 20 connections, 3 rounds of 10 s per target)
 *   BENCH_CONNECTIONS=50 BENCH_SECONDS=20 BENCH_ROUNDS=5 npm run bench
 *   BENCH_DIRECT=1 npm run bench        (past wrangler's dev proxy, at each runtime's own address)
 *   BENCH_SHAPE=issue36 npm run bench   (issue 36's external measurement: 20 connections, 3 rounds of 8 s per
 *                                        target, bare and paid alternating, nothing else loaded between them)
 *   BENCH_BARE_LOG=1 …                  (also the bare counter logging a line per request, as the service does)
 *   BENCH_REQUEST_LOG=failures …        (the service logging failures and slow calls only, as the bare counter)
 *
 * Each round also loads the bare counter answering from a timer, its increments batched into one commit by the
 * service's own GroupCommit (`POST /g/{name}`): the like-for-like reference for the paid increment's tail, which waits
 * for the same timer and commit (bench/README.md, "a like-for-like tail").
 *
 * Each round also loads the bare counter and the paid increment at one fixed offered rate
 * (BENCH_FIXED_RATE, 500 req/s), so their tails are compared below saturation too. While the
 * service serves its two reads, the bare worker serves an unmeasured load of its own: a local
 * runtime's tail lengthens with the traffic it has served, so both have served alike when compared.
 *
 * It also shows that the paid hot path runs no D1 query: every D1 table of the
 * service is dropped before the run, so a single query would fail the request.
 */
import { execFile } from "node:child_process";
import { loadavg } from "node:os";
import { promisify } from "node:util";
import autocannon from "autocannon";
import { startWranglerDev, wranglerEnv } from "../scripts/wrangler-dev.mjs";
import { postJson, roundRatios } from "./lib.mjs";

// "default": the rounds below, with the bare worker's history matched and a fixed-rate line. "issue36": the shape
// of issue 36's external measurement, which this bench first disagreed with: the targets back to back per
// round, 8 s each, and no other load (bench/README.md, "2026-11-28: issue 36's shape").
const shape = process.env.BENCH_SHAPE ?? "default";
if (!["default", "issue36"].includes(shape)) throw new Error(`BENCH_SHAPE must be default or issue36, not ${shape}`);
const issue36 = shape === "issue36";
const connections = Number(process.env.BENCH_CONNECTIONS ?? 20);
const duration = Number(process.env.BENCH_SECONDS ?? (issue36 ? 8 : 10));
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
// The tails compared again at one offered rate below both targets' capacity (autocannon corrects for coordinated
// omission).
const fixedRate = Number(process.env.BENCH_FIXED_RATE ?? 500);
const run = promisify(execFile);

async function load(title, url, headers, seconds = duration, method = "POST", overallRate = undefined) {
  const result = await autocannon({ title, url, method, headers, connections, duration: seconds, overallRate });
  const non2xx = result.non2xx + result.errors + result.timeouts;
  console.log(
    `${title}: ${result.requests.average.toFixed(0)} req/s, p50 ${result.latency.p50} ms, p99 ` +
      `${result.latency.p99} ms, max ${result.latency.max} ms, ${non2xx} non-2xx (${result.timeouts}` +
      ` timeouts, ${result.errors} errors)`,
  );
  return {
    title,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    non2xx,
  };
}

/** The median of a list of numbers. */
const middle = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// One client address and one credential push ~600 req/s (36,000 a minute): far past the production
// limits, so this run raises them. The limiter is still asked on every call (its cost is measured).
const BENCH_RATE_LIMIT_PER_MINUTE = 1_000_000;
// BENCH_REQUEST_LOG=failures: the service logs only failures and slow calls (src/operator/request-log.ts), as the
// bare counter logs nothing; the default logs every request, as a deployment does unless told otherwise.
const requestLog = process.env.BENCH_REQUEST_LOG ?? "all";
const serviceDev = await startWranglerDev({
  rateLimitPerMinute: BENCH_RATE_LIMIT_PER_MINUTE,
  vars: { REQUEST_LOG: requestLog },
});
const bareDev = await startWranglerDev({ config: "bench/bare/wrangler.toml" });
try {
  // BENCH_DIRECT=1 loads both targets at their runtime's own address, past wrangler's dev proxy (a second
  // workerd process that forwards every request and caps both near 800 req/s here): more load on each object.
  const direct = process.env.BENCH_DIRECT === "1";
  const service = { ...serviceDev, url: (direct && (await serviceDev.runtimeUrl())) || serviceDev.url };
  const bare = { url: (direct && (await bareDev.runtimeUrl())) || bareDev.url };
  console.log(
    `service at ${service.url}, bare at ${bare.url}` +
      `${direct ? " (the runtimes' own addresses)" : " (through wrangler's proxy)"}; REQUEST_LOG=${requestLog}`,
  );
  const { stdout } = await run("node", ["scripts/buy.mjs", "1000"], {
    env: { ...process.env, ZEITVAULT_URL: service.url },
  });
  const token = stdout.trim();
  const counter = await postJson(
    `${service.url}/v1/counters`,
    { ttl_seconds: 86400 },
    { authorization: `Bearer ${token}` },
  );

  // The limiter is on: the paid path pays for asking it, as in production.
  const probe = await fetch(`${service.url}/v1/resources/${counter.id}`, {
    headers: { authorization: `Bearer ${counter.management_token}` },
  });
  const rateLimitHeader = probe.headers.get("RateLimit-Limit");
  if (rateLimitHeader !== String(BENCH_RATE_LIMIT_PER_MINUTE))
    throw new Error(`rate limiter not active: RateLimit-Limit = ${rateLimitHeader}`);

  // With the service's D1 tables gone, any D1 query on the hot path would turn into a 500.
  await run(
    "node_modules/.bin/wrangler",
    [
      "d1",
      "execute",
      "DB",
      "--local",
      "--persist-to",
      service.state,
      "--command",
      "DROP TABLE resources; DROP TABLE payments; DROP TABLE credit_tokens;",
    ],
    // The runtime that made the state reads it: wrangler's own workerd is older than the project's, and fails on
    // the newer one's tables.
    { env: wranglerEnv() },
  );

  const warm = { connections, duration: 3 };
  await autocannon({ url: `${bare.url}/c/bench`, method: "POST", ...warm });
  await autocannon({ url: `${bare.url}/g/bench`, method: "POST", ...warm });
  await load(
    "warm-up",
    `${service.url}/v1/counters/${counter.id}/increment`,
    { authorization: `Bearer ${counter.management_token}`, "x-credit-token": token },
    3,
  );

  // Alternate the two targets for a few rounds and keep the median of each: this machine is shared with the load
  // generator.
  const paidHeaders = { authorization: `Bearer ${counter.management_token}`, "x-credit-token": token };
  const bareRuns = [];
  const bareTimerRuns = [];
  const bareLog = process.env.BENCH_BARE_LOG === "1";
  const bareLogRuns = [];
  const paidRuns = [];
  const freeReadRuns = [];
  const paidReadRuns = [];
  // A local runtime's tail lengthens with the traffic it has served (bench/README.md, "equal load history").
  // Not in issue 36's shape, which loads nothing between the targets.
  const matchHistory = async () => {
    if (!issue36) await autocannon({ url: `${bare.url}/c/bench`, method: "POST", connections, duration });
  };
  const bareFixedRuns = [];
  const paidFixedRuns = [];
  for (let round = 0; round < rounds; round++) {
    bareRuns.push(await load("bare DO counter", `${bare.url}/c/bench`, {}));
    bareTimerRuns.push(await load("bare DO counter, answered from a timer", `${bare.url}/g/bench`, {}));
    // BENCH_BARE_LOG=1: the bare counter logging a line per request as the service does (bench/README.md,
    // "2026-11-28"): under `wrangler dev` each line travels over the inspector to the proxy and to wrangler.
    if (bareLog) bareLogRuns.push(await load("bare DO counter, a log line", `${bare.url}/l/bench`, {}));
    paidRuns.push(await load("paid increment", `${service.url}/v1/counters/${counter.id}/increment`, paidHeaders));
    freeReadRuns.push(
      await load(
        "free read (record, management token)",
        `${service.url}/v1/resources/${counter.id}`,
        { authorization: `Bearer ${counter.management_token}` },
        duration,
        "GET",
      ),
    );
    await matchHistory();
    paidReadRuns.push(
      await load(
        "paid read (counter, credit token)",
        `${service.url}/v1/counters/${counter.id}`,
        paidHeaders,
        duration,
        "GET",
      ),
    );
    await matchHistory();
    if (issue36) continue;
    bareFixedRuns.push(
      await load(`bare DO counter at ${fixedRate} req/s`, `${bare.url}/c/bench`, {}, duration, "POST", fixedRate),
    );
    paidFixedRuns.push(
      await load(
        `paid increment at ${fixedRate} req/s`,
        `${service.url}/v1/counters/${counter.id}/increment`,
        paidHeaders,
        duration,
        "POST",
        fixedRate,
      ),
    );
  }
  const median = (runs) => [...runs].sort((a, b) => a.rps - b.rps)[Math.floor(runs.length / 2)];
  const baseline = median(bareRuns);
  const paid = median(paidRuns);
  const freeRead = median(freeReadRuns);
  const paidRead = median(paidReadRuns);
  const failures = paidRuns.reduce((n, r) => n + r.non2xx, 0);
  const paidTotal = paidRuns.reduce((n, r) => n + r.total, 0);
  // Reading the balance settles every hold, so the spend is exact.
  const balance = await (
    await fetch(`${service.url}/v1/credits/balance`, { headers: { authorization: `Bearer ${token}` } })
  ).json();
  const reads = paidReadRuns.reduce((n, r) => n + r.total, 0);
  // Increments and paid reads both cost $0.0001.
  const calls = Math.round((balance.spent_usd - 0.001) / 0.0001);
  // The counter's own value is the number of increments that happened (autocannon stops waiting for the last in-flight
  // ones).
  const exported = await (
    await fetch(`${service.url}/v1/resources/${counter.id}/export`, {
      headers: { authorization: `Bearer ${counter.management_token}` },
    })
  ).json();

  const rows = [baseline, paid, freeRead, paidRead].map(
    (r) => `| ${r.title} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.total} | ${r.non2xx} |`,
  );
  console.log(
    `\n${connections} connections, ${rounds} alternating rounds of ${duration} s per target (median ` +
      `shown), ${new Date().toISOString()}\n`,
  );
  console.log(
    "| target | req/s | p50 ms | p99 ms | requests | non-2xx |\n|---|---|---|---|---|---|\n" + rows.join("\n"),
  );
  console.log(
    `\nratio paid/bare, median of the rounds' ratios: ${roundRatios(paidRuns, bareRuns).text} (target ≥ 85%)`,
  );
  console.log(`p99 paid/bare, median of the rounds' ratios: ${roundRatios(paidRuns, bareRuns, "p99").text}`);
  console.log(
    `p99 paid/bare answered from a timer (like for like), median of the rounds' ratios: ` +
      `${roundRatios(paidRuns, bareTimerRuns, "p99").text} (target ≤ 1.3×)`,
  );
  // The free read pays nothing and writes nothing: its tail against the bare one is the machine's share of the paid
  // call's.
  console.log(`p99 free read/bare, for reference: ${roundRatios(freeReadRuns, bareRuns, "p99").text}`);
  if (!issue36)
    console.log(
      `p99 paid/bare at ${fixedRate} req/s offered, median of the rounds' ratios: ` +
        `${roundRatios(paidFixedRuns, bareFixedRuns, "p99").text}`,
    );
  console.log(
    `ratio paid read/free read, median of the rounds' ratios: ` +
      `${roundRatios(paidReadRuns, freeReadRuns).text} (target ≥ 90%)`,
  );
  console.log(
    `rate limits: asked on every call (per credential and per IP), raised to ${BENCH_RATE_LIMIT_PER_MINUTE}` +
      ` a minute for this run`,
  );
  console.log(`D1 queries on the hot path: 0 (D1 tables dropped before the run; ${failures} non-2xx of ${paidTotal})`);
  // autocannon does not count answers that arrive after a round stops: the counter's value is exact, the reads a floor.
  console.log(
    `charged exactly once: ${calls} calls charged = counter value ${exported.data.value} + ` +
      `${calls - exported.data.value} paid reads (autocannon counted ${reads} reads)`,
  );

  // A short table to paste into bench/README.md: every target's rounds, then the ratios.
  const allRuns = [bareRuns, bareTimerRuns, ...(bareLog ? [bareLogRuns] : []), paidRuns, freeReadRuns, paidReadRuns];
  const nonTwo = allRuns.flat().reduce((n, r) => n + r.non2xx, 0);
  const cell = (runs, key) =>
    `${middle(runs.map((r) => r[key])).toFixed(0)} (${runs.map((r) => r[key].toFixed(0)).join(", ")})`;
  const route = direct ? "direct" : "through the proxy";
  const loadAverage = loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");
  console.log(
    `\nSummary (${shape} shape, ${connections} connections, ${rounds} rounds of ${duration} s per target, ` +
      `${route}; load average ${loadAverage}):\n`,
  );
  console.log(
    [
      "| target | req/s, median (rounds) | p99 ms, median (rounds) |",
      "|---|---|---|",
      ...allRuns.map((runs) => `| ${runs[0].title} | ${cell(runs, "rps")} | ${cell(runs, "p99")} |`),
      `| **paid increment / bare** | **${roundRatios(paidRuns, bareRuns).text}** | **` +
        `${roundRatios(paidRuns, bareRuns, "p99").text}** |`,
      `| **paid increment / bare answered from a timer** (like for like) | ` +
        `${roundRatios(paidRuns, bareTimerRuns).text} | **${roundRatios(paidRuns, bareTimerRuns, "p99").text}** |`,
      ...(bareLog
        ? [
            `| paid increment / bare with a log line | ${roundRatios(paidRuns, bareLogRuns).text} | ` +
              `${roundRatios(paidRuns, bareLogRuns, "p99").text} |`,
          ]
        : []),
      `| **paid read / free read** | **${roundRatios(paidReadRuns, freeReadRuns).text}** | ` +
        `${roundRatios(paidReadRuns, freeReadRuns, "p99").text} |`,
      `| free read / bare, for reference | ${roundRatios(freeReadRuns, bareRuns).text} | ` +
        `${roundRatios(freeReadRuns, bareRuns, "p99").text} |`,
    ].join("\n"),
  );
  console.log(
    `\nnon-2xx, every target and round: ${nonTwo}; charged ${calls} = counter value ${exported.data.value}` +
      ` + ${calls - exported.data.value} paid reads; targets: paid increment ≥ 85% of bare with p99 ≤ 1.3× the ` +
      `bare answered from a timer, ` +
      `paid read ≥ 90% of free`,
  );
} finally {
  await serviceDev.stop();
  await bareDev.stop();
}
