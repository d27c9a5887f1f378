#!/usr/bin/env node
/**
 * Webhook ingest: a public POST of a 1 KiB JSON body into an inbox (the public router, the object's
 * prepare and handle, the row and its stats) against the bare platform's Durable Object write of the
 * same body (bench/bare: `POST /w/{name}`, one INSERT), under `wrangler dev` on this machine,
 * measured with autocannon in the same run, targets alternated round by round.
 *
 *   npm run bench:inboxes                 (20 connections, 3 rounds of 8 s per target)
 *   BENCH_CONNECTIONS=50 BENCH_ROUNDS=5 npm run bench:inboxes
 *
 * The service's D1 tables are dropped first: a public hit resolves its object from the address alone.
 * Each round posts to a fresh inbox (one keeps 10,000 requests); at the end each inbox's last seq is
 * compared with the 200s autocannon counted for it.
 */
import autocannon from "autocannon";
import { startWranglerDev, wranglerEnv } from "../scripts/wrangler-dev.mjs";
import { buyCredits, roundRatios, run } from "./lib.mjs";

const connections = Number(process.env.BENCH_CONNECTIONS ?? 20);
const duration = Number(process.env.BENCH_SECONDS ?? 8);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);

// A GitHub-sized event: 1 KiB of JSON.
const body = JSON.stringify({
  action: "opened",
  number: 42,
  repository: { full_name: "octo/hello", private: false },
  sender: { login: "octocat" },
  pad: "x".repeat(899),
});
if (Buffer.byteLength(body) !== 1024) throw new Error(`body is ${Buffer.byteLength(body)} bytes`);
const headers = { "content-type": "application/json", "x-github-event": "pull_request" };

async function load(title, url) {
  const result = await autocannon({ title, url, method: "POST", headers, body, connections, duration });
  return {
    title,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    ok: result["2xx"],
    other: result.non2xx + result.errors + result.timeouts,
  };
}

const service = await startWranglerDev({ rateLimitPerMinute: 1_000_000 });
const bare = await startWranglerDev({ config: "bench/bare/wrangler.toml" });
try {
  const token = await buyCredits(service.url, 10);
  // A fresh inbox for each round: one keeps 10,000 requests, fewer than a round posts at full speed.
  const newInbox = async () =>
    await (
      await fetch(`${service.url}/v1/inboxes`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify({ ttl_seconds: 86400 }),
      })
    ).json();
  const inboxes = await Promise.all(Array.from({ length: rounds + 1 }, newInbox));
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

  const warm = { method: "POST", headers, body, connections, duration: 3 };
  await autocannon({ url: `${bare.url}/w/bench`, ...warm });
  await autocannon({ url: inboxes[rounds].urls.public, ...warm });

  const bareRuns = [];
  const inboxRuns = [];
  for (let round = 0; round < rounds; round++) {
    bareRuns.push(await load("bare DO write (1 KiB body)", `${bare.url}/w/bench`));
    inboxRuns.push(await load("inbox ingest (public POST, 1 KiB JSON)", inboxes[round].urls.public));
  }
  const median = (runs) => [...runs].sort((a, b) => a.rps - b.rps)[Math.floor(runs.length / 2)];
  const baseline = median(bareRuns);
  const inbox = median(inboxRuns);
  // Every 200 names a seq; the inbox's last seq is how many it kept (autocannon stops counting answers in flight when a
  // round ends).
  const kept = [];
  for (let round = 0; round < rounds; round++) {
    const info = await (
      await fetch(`${service.url}/v1/inboxes/${inboxes[round].id}`, {
        headers: { authorization: `Bearer ${inboxes[round].management_token}`, "x-credit-token": token },
      })
    ).json();
    kept.push(`${info.last_seq} kept / ${inboxRuns[round].ok} counted`);
  }
  const refused = inboxRuns.reduce((n, r) => n + r.other, 0);

  const rows = [baseline, inbox].map(
    (r) => `| ${r.title} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.ok} | ${r.other} |`,
  );
  console.log(
    `\n${connections} connections, ${rounds} alternating rounds of ${duration} s per target (median ` +
      `shown), ${new Date().toISOString()}\n`,
  );
  console.log("| target | req/s | p50 ms | p99 ms | 2xx | other |\n|---|---|---|---|---|---|\n" + rows.join("\n"));
  console.log(
    `\ningest/bare, median of the rounds' ratios: ${roundRatios(inboxRuns, bareRuns).text} (target ≥ 80%), ` +
      `p99 ${(inbox.p99 / baseline.p99).toFixed(2)}×`,
  );
  console.log(`kept exactly once, per round: ${kept.join(", ")}; ${refused} answers other than 200`);
} finally {
  await service.stop();
  await bare.stop();
}
