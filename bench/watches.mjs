#!/usr/bin/env node
/**
 * Many watches at the minimum interval (60 s) against a local target, under `wrangler dev` on this
 * machine, for a few minutes: every check must be made (the target's count of requests equals the
 * checks the watches recorded, and each watch made one per minute), how late each scheduled check
 * ran (its `at` minus its `scheduled_at`, from the watches' own histories), and what a check costs
 * the runtime (the workerd process's CPU time over the window, divided by the checks made in it).
 *
 *   npm run bench:watches                         (1,000 watches for 5 minutes)
 *   BENCH_WATCHES=100 BENCH_MINUTES=2 npm run bench:watches
 *
 * The target answers 200 "ok" and counts requests per watch. Watches are created first (each makes
 * its first check at once); the window starts when the last is made, so every watch is on its
 * schedule through the whole window. The worker runs from a copy of the source (see lib.mjs).
 */
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { startWranglerDev } from "../scripts/wrangler-dev.mjs";
import { buyCredits, log, percentiles, pool, run, sleep, snapshotSource } from "./lib.mjs";

const env = process.env;
const count = Number(env.BENCH_WATCHES ?? 1000);
const minutes = Number(env.BENCH_MINUTES ?? 5);
const concurrency = Number(env.BENCH_CONCURRENCY ?? 32);
const INTERVAL_MS = 60_000;

// The target: counts and times every request, per watch.
const hits = new Map();
const target = createServer((req, res) => {
  const id = (req.url ?? "").split("/")[2] ?? "";
  hits.set(id, [...(hits.get(id) ?? []), Date.now()]);
  res.writeHead(200, { "content-type": "text/plain" }).end("ok");
});
await new Promise((r) => target.listen(0, "127.0.0.1", r));
const targetUrl = `http://127.0.0.1:${target.address().port}`;

/** CPU seconds (user + system) of the workerd processes below this one. */
async function workerdCpuSeconds() {
  const { stdout } = await run("ps", ["-eo", "pid=,ppid=,args="], { maxBuffer: 16 << 20 });
  const all = stdout
    .split("\n")
    .map((l) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(l))
    .filter(Boolean)
    .map((m) => ({ pid: +m[1], ppid: +m[2], args: m[3] }));
  const parent = new Map(all.map((p) => [p.pid, p.ppid]));
  const ours = (pid) => {
    for (let at = pid, hops = 0; at > 1 && hops < 64; at = parent.get(at) ?? 0, hops++)
      if (at === process.pid) return true;
    return false;
  };
  const tick = 100; // USER_HZ
  return all
    .filter((p) => /bin\/workerd /.test(p.args) && ours(p.pid))
    .reduce((sum, p) => {
      const fields = readFileSync(`/proc/${p.pid}/stat`, "utf8").split(") ")[1].split(" ");
      return sum + (Number(fields[11]) + Number(fields[12])) / tick;
    }, 0);
}

const sourceDir = await snapshotSource(env.BENCH_SOURCE ?? "worktree");
const { stdout: revision } = await run("git", ["rev-parse", "--short", "HEAD"]);
process.chdir(sourceDir);
const service = await startWranglerDev({
  rateLimitPerMinute: 1_000_000,
  vars: { ENVIRONMENT: "development", X402_SETTLEMENT: "none", ALLOW_PRIVATE_TARGETS: "true" },
});
try {
  const token = await buyCredits(service.url, Math.ceil(count * 0.012) + 5);
  const auth = { "content-type": "application/json", authorization: `Bearer ${token}` };
  log(`wrangler dev (working tree at ${revision.trim()}), target ${targetUrl}, ${count} watches`);

  const watches = new Array(count);
  const createStart = Date.now();
  await pool(count, concurrency, async (i) => {
    const body = {
      check: { type: "http_status", url: `${targetUrl}/w/${i}` },
      interval_seconds: 60,
      ttl_seconds: 3600,
    };
    for (let attempt = 0; ; attempt++) {
      const res = await fetch(`${service.url}/v1/watches`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify(body),
      });
      if (res.status === 201) {
        const r = await res.json();
        watches[i] = { id: r.id, mgmt: r.management_token, path: String(i) };
        return;
      }
      if (attempt >= 5) throw new Error(`create ${i}: ${res.status} ${await res.text()}`);
      await sleep(500);
    }
  });
  const windowStart = Date.now();
  log(`created ${count} in ${((windowStart - createStart) / 1000).toFixed(1)} s; watching for ${minutes} min`);
  const cpuStart = await workerdCpuSeconds();
  await sleep(minutes * INTERVAL_MS);
  const windowEnd = Date.now();
  const cpuEnd = await workerdCpuSeconds();

  // Each watch's history: the checks it recorded, when they were due and when they ran.
  const lateness = [];
  let recorded = 0;
  let recordedInWindow = 0;
  let failed = 0;
  const perWatch = [];
  await pool(count, concurrency, async (i) => {
    const w = watches[i];
    const res = await fetch(`${service.url}/v1/watches/${w.id}/checks?limit=100`, {
      headers: { authorization: `Bearer ${w.mgmt}`, "x-credit-token": token },
    });
    if (res.status !== 200) throw new Error(`history ${i}: ${res.status} ${await res.text()}`);
    const { items } = await res.json();
    const inWindow = items.filter((c) => Date.parse(c.at) >= windowStart && Date.parse(c.at) < windowEnd);
    recorded += items.length;
    recordedInWindow += inWindow.length;
    failed += items.filter((c) => !c.ok).length;
    perWatch.push(inWindow.length);
    for (const c of inWindow) if (c.scheduled_at) lateness.push(Date.parse(c.at) - Date.parse(c.scheduled_at));
  });
  const targetHits = [...hits.values()].reduce((n, h) => n + h.length, 0);
  const hitsInWindow = [...hits.values()].reduce(
    (n, h) => n + h.filter((t) => t >= windowStart && t < windowEnd).length,
    0,
  );
  const cpu = cpuEnd - cpuStart;
  const summary = {
    watches: count,
    minutes,
    revision: revision.trim(),
    checks: {
      recorded,
      target_hits: targetHits,
      every_check_made: recorded === targetHits,
      failed,
      in_window: recordedInWindow,
      target_hits_in_window: hitsInWindow,
    },
    per_watch_in_window: percentiles(perWatch),
    lateness_ms: percentiles(lateness),
    workerd_cpu_seconds: Number(cpu.toFixed(2)),
    cpu_ms_per_check: Number(((cpu * 1000) / Math.max(1, hitsInWindow)).toFixed(3)),
  };
  console.log(JSON.stringify(summary, null, 2));
} finally {
  await service.stop();
  target.close();
}
