#!/usr/bin/env node
/**
 * Does a local runtime's tail depend on the traffic it has already served? One target is measured
 * at a fixed offered rate (BENCH_FIXED_RATE, 500 req/s) on a fresh `wrangler dev`, then again after
 * each of a few saturating loads of the same target (unmeasured), twice each time.
 *
 *   npm run bench:history                      (the bare Durable Object counter of bench/bare/)
 *   BENCH_TARGET=free-read npm run bench:history   (the service's free read: a record with its management token)
 *   BENCH_DIRECT=1 npm run bench:history           (past wrangler's dev proxy, at the runtime's own address)
 *
 * Why it exists: bench/counters.mjs compares the service against the bare worker, each in its own
 * runtime, and the comparison is only fair if both runtimes have served alike (bench/README.md,
 * "equal load history").
 */
import autocannon from "autocannon";
import { startWranglerDev } from "../scripts/wrangler-dev.mjs";
import { buyCredits, postJson } from "./lib.mjs";

const target = process.env.BENCH_TARGET ?? "bare";
const fixedRate = Number(process.env.BENCH_FIXED_RATE ?? 500);
const cycles = Number(process.env.BENCH_ROUNDS ?? 3);
const connections = 20;

const dev =
  target === "bare"
    ? await startWranglerDev({ config: "bench/bare/wrangler.toml" })
    : await startWranglerDev({ rateLimitPerMinute: 1_000_000 });
try {
  const url = (process.env.BENCH_DIRECT === "1" && (await dev.runtimeUrl())) || dev.url;
  let request = { url: `${url}/c/bench`, method: "POST" };
  if (target === "free-read") {
    const token = await buyCredits(dev.url, 1);
    const counter = await postJson(
      `${dev.url}/v1/counters`,
      { ttl_seconds: 86400 },
      { authorization: `Bearer ${token}` },
    );
    request = {
      url: `${url}/v1/resources/${counter.id}`,
      method: "GET",
      headers: { authorization: `Bearer ${counter.management_token}` },
    };
  } else if (target !== "bare") {
    throw new Error("BENCH_TARGET must be bare or free-read");
  }
  let served = 0;
  const measure = async (label) => {
    const r = await autocannon({ ...request, connections, duration: 8, overallRate: fixedRate });
    served += r.requests.total;
    console.log(
      `${label.padEnd(28)} p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, max ${r.latency.max} ms (` +
        `${served} served so far)`,
    );
  };
  await autocannon({ ...request, connections, duration: 3 });
  await measure(`${target}${url === dev.url ? "" : " (direct)"}, fresh, ${fixedRate} req/s`);
  for (let cycle = 1; cycle <= cycles; cycle++) {
    const load = await autocannon({ ...request, connections, duration: 20 });
    served += load.requests.total;
    await measure(`after saturating load ${cycle}`);
    await measure("  and again");
  }
} finally {
  await dev.stop();
}
