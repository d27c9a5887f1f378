#!/usr/bin/env node
/**
 * A narrowed management token against the resource's own (docs/api.md#narrowed-management-tokens): the same
 * paid vault read, 1,000 calls with each per round, alternated round by round, under `wrangler dev` on this
 * machine. The narrowed token is limited every way a call is checked (operations, expiry, a paid-call cap,
 * a key prefix), so each call pays for every check: the indexed read of its limits, the key against the
 * prefix, and the count of its paid call in the transaction that charges it.
 *
 *   npm run bench:tokens                 (defaults: 1,000 calls per target and round, 20 in flight, 5 rounds)
 *   BENCH_CALLS=5000 BENCH_CONCURRENCY=50 BENCH_ROUNDS=7 npm run bench:tokens
 *
 * It then checks that the narrowed token counted exactly its own calls, and that each call was charged.
 */
import { startWranglerDev } from "../scripts/wrangler-dev.mjs";
import { buyCredits, log, percentiles, pool, postJson, roundRatios } from "./lib.mjs";

const calls = Number(process.env.BENCH_CALLS ?? 1000);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 20);
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);

/** `calls` paid reads with `token`, `concurrency` in flight: throughput and latency percentiles; any non-200 throws. */
async function load(title, url, headers) {
  const latencies = [];
  const started = performance.now();
  await pool(calls, concurrency, async () => {
    const t = performance.now();
    const res = await fetch(url, { headers });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${title}: ${res.status}`);
    latencies.push(performance.now() - t);
  });
  const seconds = (performance.now() - started) / 1000;
  const p = percentiles(latencies);
  const out = { title, rps: calls / seconds, p50: p.p50, p99: p.p99 };
  log(`${title}: ${out.rps.toFixed(0)} req/s, p50 ${p.p50.toFixed(1)} ms, p99 ${p.p99.toFixed(1)} ms`);
  return out;
}

const dev = await startWranglerDev({ rateLimitPerMinute: 1_000_000 });
try {
  const credit = await buyCredits(dev.url, 100);
  const vault = await postJson(`${dev.url}/v1/vaults`, { ttl_seconds: 86400 }, { authorization: `Bearer ${credit}` });
  const own = { authorization: `Bearer ${vault.management_token}`, "x-credit-token": credit };
  const key = encodeURIComponent("agents/alice/profile");
  const put = await fetch(`${dev.url}/v1/vaults/${vault.id}/keys/${key}`, {
    method: "PUT",
    headers: { ...own, "content-type": "application/json" },
    body: JSON.stringify({ value: { name: "Alice" } }),
  });
  if (put.status !== 200) throw new Error(`put: ${put.status} ${await put.text()}`);
  const narrowed = await postJson(
    `${dev.url}/v1/resources/${vault.id}/tokens`,
    {
      operations: ["get", "list"],
      expires_at: new Date(Date.now() + 3_600_000).toISOString(),
      max_paid_calls: 1_000_000,
      key_prefixes: ["agents/alice/"],
    },
    { authorization: `Bearer ${vault.management_token}` },
  );
  const sub = { authorization: `Bearer ${narrowed.management_token}`, "x-credit-token": credit };
  const url = `${dev.url}/v1/vaults/${vault.id}/keys/${key}`;

  await load("warm-up (own token)", url, own);
  await load("warm-up (narrowed token)", url, sub);
  const ownRuns = [];
  const subRuns = [];
  for (let round = 0; round < rounds; round++) {
    // Which goes first alternates too: a round's second target meets the runtime the first one warmed.
    const pair =
      round % 2 === 0
        ? [
            ["own", own],
            ["narrowed", sub],
          ]
        : [
            ["narrowed", sub],
            ["own", own],
          ];
    for (const [name, headers] of pair)
      (name === "own" ? ownRuns : subRuns).push(await load(`${name} token, round ${round + 1}`, url, headers));
  }
  const median = (runs, metric) => [...runs].map((r) => r[metric]).sort((a, b) => a - b)[Math.floor(runs.length / 2)];
  console.log(
    `\n${calls} paid vault reads per target and round, ${concurrency} in flight, ${rounds} alternating ` +
      `rounds (median shown), ${new Date().toISOString()}\n`,
  );
  console.log("| token | req/s | p50 ms | p99 ms |\n|---|---|---|---|");
  for (const [name, runs] of [
    ["resource's own", ownRuns],
    ["narrowed (operations, expiry, cap, prefix)", subRuns],
  ]) {
    console.log(
      `| ${name} | ${median(runs, "rps").toFixed(0)} | ${median(runs, "p50").toFixed(1)} | ` +
        `${median(runs, "p99").toFixed(1)} |`,
    );
  }
  console.log(`\nthroughput narrowed/own, median of the rounds' ratios: ${roundRatios(subRuns, ownRuns).text}`);
  console.log(`p99 narrowed/own, median of the rounds' ratios: ${roundRatios(subRuns, ownRuns, "p99").text}`);

  const list = await (
    await fetch(`${dev.url}/v1/resources/${vault.id}/tokens`, {
      headers: { authorization: `Bearer ${vault.management_token}` },
    })
  ).json();
  const counted = list.items[0].paid_calls;
  const expected = calls * (rounds + 1);
  console.log(
    `paid calls counted on the narrowed token: ${counted} of ${expected} made with it` +
      `${counted === expected ? " (exact)" : " (MISMATCH)"}`,
  );
  const balance = await (
    await fetch(`${dev.url}/v1/credits/balance`, { headers: { authorization: `Bearer ${credit}` } })
  ).json();
  console.log(`spent: $${balance.spent_usd} for ${2 * expected} reads, a put and a create`);
} finally {
  await dev.stop();
}
