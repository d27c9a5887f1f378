#!/usr/bin/env node
/**
 * Many wakeups due within the same minute, under `wrangler dev` on this machine: each must reach a
 * local receiver exactly once, and how late it arrives is measured.
 *
 *   npm run bench:wakeups                         (10,000 wakeups over a 60 s window)
 *   BENCH_WAKEUPS=500 npm run bench:wakeups       (a quick run while developing)
 *   BENCH_CONCURRENCY=32 BENCH_WINDOW_SECONDS=60 BENCH_TIMEOUT_SECONDS=600 BENCH_GRACE_SECONDS=15
 *   BENCH_SETTLE_SECONDS=120 BENCH_PROBES=200 BENCH_LEAD_SECONDS=600 BENCH_SHARDS=3 BENCH_STATUS=0
 *   BENCH_SOURCE=head …
 *
 * The receiver runs in this process: it checks each delivery's Standard Webhooks signature with the
 * wakeup's own signing_secret, records its webhook-id and arrival time, and answers 200. Every wakeup
 * must exist before it is due, so the window's start is planned from the create rate measured on a few
 * probe wakeups (due tomorrow, they never fire here), with a safety margin. Afterwards each wakeup's
 * status is read (BENCH_STATUS=0 skips it) to split lateness into the alarm's and the queue's part,
 * and to see that the consumer reported each delivery back (status `delivered`).
 *
 * Two limits of the local runtime shape the run:
 * - `wrangler dev` reloads the worker whenever a source file changes, which drops the local queue's
 *   in-memory messages. The worker runs from a copy of the source made at the start: the working
 *   tree as it is (default) or, with BENCH_SOURCE=head, the last commit.
 * - workerd keeps each Durable Object that ran recently open with its SQLite file, -wal and -shm:
 *   three descriptors. Past the open-files limit its SQLite calls fail (SQLITE_NOMEM), so with the
 *   usual 20,000 one workerd holds about 6,000 busy objects. The wakeups are spread round-robin over
 *   BENCH_SHARDS `wrangler dev` instances (by default as many as the limit asks), like objects spread
 *   over machines; each has its own D1, queue and consumer.
 */
import { existsSync, readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { createServer } from "node:http";
import { availableParallelism, loadavg } from "node:os";
import { Webhook } from "standardwebhooks";
import { startWranglerDev } from "../scripts/wrangler-dev.mjs";
import { buyCredits, log, percentiles, pool, run, sleep, snapshotSource } from "./lib.mjs";

const env = process.env;
const count = Number(process.argv[2] ?? env.BENCH_WAKEUPS ?? 10_000);
// wrangler dev's proxy answers some requests 503 "Your worker restarted mid-request" (without a restart,
// and without passing them on) once more than about 32 are in flight.
const concurrency = Number(env.BENCH_CONCURRENCY ?? 32);
const windowMs = Number(env.BENCH_WINDOW_SECONDS ?? 60) * 1000;
const timeoutMs = Number(env.BENCH_TIMEOUT_SECONDS ?? 600) * 1000;
const graceMs = Number(env.BENCH_GRACE_SECONDS ?? 15) * 1000;
const settleMs = Number(env.BENCH_SETTLE_SECONDS ?? 120) * 1000;
const probes = Number(env.BENCH_PROBES ?? 200);
/** Seconds from the first create to the window's start; by default planned from the probe. */
const leadSeconds = Number(env.BENCH_LEAD_SECONDS ?? 0);
const readStatus = env.BENCH_STATUS !== "0";
const source = env.BENCH_SOURCE ?? "worktree";
const SAFETY = 1.6;
const MARGIN_MS = 15_000;
const TTL_SECONDS = 3600;

function openFilesLimit() {
  const limits = existsSync("/proc/self/limits") ? readFileSync("/proc/self/limits", "utf8") : "";
  return Number(/Max open files\s+(\d+)/.exec(limits)?.[1] ?? Infinity);
}
/** Three descriptors per busy object; half the limit, as objects created earlier may still be open. */
const shards = Number(env.BENCH_SHARDS ?? Math.max(1, Math.ceil((count * 3) / (openFilesLimit() * 0.5))));

const fmt = (p) => `p50 ${p.p50} ms, p90 ${p.p90} ms, p99 ${p.p99} ms, max ${p.max} ms (min ${p.min} ms, n = ${p.n})`;
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

// The machine is shared: the 1-minute load average, every 5 s, tells whether a run was disturbed.
const loads = [];
setInterval(() => loads.push(loadavg()[0]), 5000).unref();

// ---- the receiver ----

const wakeups = new Array(count); // i → { id, mgmt, secret, at, createdAt, shard }
const arrivals = []; // { i, webhookId, t, valid }, in arrival order
const firstArrival = new Map(); // i → its first arrival
let strayRequests = 0;
const receiver = createServer((req, res) => {
  const t = Date.now();
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const i = Number(/^\/w\/(\d+)$/.exec(req.url ?? "")?.[1] ?? NaN);
    const secret = wakeups[i]?.secret;
    if (secret === undefined) {
      strayRequests++; // a probe, or a wakeup whose create did not answer
    } else {
      let valid = false;
      try {
        valid = new Webhook(secret).verify(Buffer.concat(chunks).toString("utf8"), req.headers) !== undefined;
      } catch {
        valid = false;
      }
      const arrival = { i, webhookId: String(req.headers["webhook-id"]), t, valid };
      arrivals.push(arrival);
      if (!firstArrival.has(i)) firstArrival.set(i, arrival);
    }
    res.writeHead(200, { "content-type": "text/plain" }).end("ok");
  });
});
await new Promise((r) => receiver.listen(0, "127.0.0.1", r));
const receiverUrl = `http://127.0.0.1:${receiver.address().port}`;

// ---- the service ----

let proxyRetries = 0;
async function createWakeup(shard, body) {
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(`${shard.url}/v1/wakeups`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${shard.token}` },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(120_000),
    });
    const text = await res.text();
    if (res.status === 201) return JSON.parse(text);
    // The dev proxy's 503 never reached the worker (nothing was charged), so it is safe to send again.
    if (res.status === 503 && text.includes("restarted mid-request") && attempt < 4) {
      proxyRetries++;
      await sleep(200 * attempt);
      continue;
    }
    throw new Error(`create: ${res.status} ${text.slice(0, 300)}`);
  }
}

const sourceDir = await snapshotSource(source);
const { stdout: revision } = await run("git", ["rev-parse", "--short", "HEAD"]);
process.chdir(sourceDir);
const services = [];
let failed = false;
try {
  const dollars = Math.min(
    1000,
    Math.ceil((((probes + count) * 0.0005 + count * (readStatus ? 0.0002 : 0)) * 1.2) / shards + 1),
  );
  for (let s = 0; s < shards; s++) {
    const service = await startWranglerDev({
      rateLimitPerMinute: 1_000_000, // one credential and one address create far more than 6000 a minute here
      vars: { ENVIRONMENT: "development", X402_SETTLEMENT: "none", ALLOW_PRIVATE_TARGETS: "true" },
    });
    services.push(service);
    service.token = await buyCredits(service.url, dollars);
  }
  const shardOf = (i) => services[i % shards];
  log(
    `${shards} × wrangler dev (${source === "head" ? "commit" : "working tree at"} ${revision.trim()}` +
      `), receiver ${receiverUrl}, $${dollars} of credits each`,
  );

  // Probe: the create rate on this machine now, with wakeups that are due long after the run.
  const tomorrow = new Date(Date.now() + 86_400_000 - 60_000).toISOString();
  const probeStart = Date.now();
  await pool(probes, concurrency, (k) =>
    createWakeup(shardOf(k), { url: `${receiverUrl}/probe`, at: tomorrow, ttl_seconds: 86_400 }),
  );
  const probeRate = probes / ((Date.now() - probeStart) / 1000);

  const createStart = Date.now();
  const windowStart =
    createStart + (leadSeconds ? leadSeconds * 1000 : Math.ceil((count / probeRate) * 1000 * SAFETY) + MARGIN_MS);
  const windowEnd = windowStart + windowMs;
  const dueAt = (i) => windowStart + Math.floor((i * windowMs) / count);
  log(`probe: ${probeRate.toFixed(0)} creates/s; the window opens in ${seconds(windowStart - createStart)}`);

  // The earliest due is created first.
  const createErrors = new Map(); // message → count
  await pool(count, concurrency, async (i) => {
    try {
      const w = await createWakeup(shardOf(i), {
        url: `${receiverUrl}/w/${i}`,
        at: new Date(dueAt(i)).toISOString(),
        ttl_seconds: TTL_SECONDS,
        body: { i },
      });
      wakeups[i] = {
        id: w.id,
        mgmt: w.management_token,
        secret: w.signing_secret,
        at: Date.parse(w.status.fire_at),
        createdAt: Date.now(),
        shard: shardOf(i),
      };
    } catch (err) {
      createErrors.set(String(err), (createErrors.get(String(err)) ?? 0) + 1);
    }
    if (i % 1000 === 999) log(`created ${i + 1}`);
  });
  const createEnd = Date.now();
  const created = wakeups.filter(Boolean);
  const createFailures = count - created.length;
  const createdLate = created.filter((w) => w.createdAt > w.at).length;
  const wrongTime = wakeups.filter((w, i) => w && w.at !== dueAt(i)).length;
  log(`created ${created.length} in ${seconds(createEnd - createStart)}; ${createFailures} failed`);
  for (const [message, n] of createErrors) log(`  ${n}× ${message}`);

  // Wait for every created wakeup, then a little longer for duplicates.
  let lastLog = 0;
  while (Date.now() < windowEnd + timeoutMs && firstArrival.size < created.length) {
    if (Date.now() - lastLog >= 10_000) {
      lastLog = Date.now();
      log(`${firstArrival.size}/${created.length} arrived`);
    }
    await sleep(250);
  }
  const allArrived = firstArrival.size >= created.length;
  log(allArrived ? `all arrived; waiting ${seconds(graceMs)} for duplicates` : "timed out");
  await sleep(graceMs);
  const countedUntil = arrivals.length;

  // The service's view: fired_at (when the alarm fired) and the status the consumer reported back.
  // One that is not delivered yet is read again until it is, or BENCH_SETTLE_SECONDS pass.
  let statusLines = ["status not read (BENCH_STATUS=0)"];
  if (readStatus) {
    const headersOf = (w) => ({ authorization: `Bearer ${w.mgmt}`, "x-credit-token": w.shard.token });
    const statusOf = async (i) => {
      const w = wakeups[i];
      const res = await fetch(`${w.shard.url}/v1/wakeups/${w.id}`, { headers: headersOf(w) }).catch(() => null);
      return res?.ok ? res.json() : null;
    };
    const seen = new Map(); // i → status
    await pool(count, concurrency, async (i) => {
      const s = wakeups[i] ? await statusOf(i) : null;
      if (s) seen.set(i, s);
    });
    const states = {};
    for (const s of seen.values()) states[s.status] = (states[s.status] ?? 0) + 1;
    const unsettled = [...seen].filter(([, s]) => s.status !== "delivered").map(([i]) => i);
    const settleDeadline = Date.now() + settleMs;
    for (let pending = unsettled; pending.length && Date.now() < settleDeadline;) {
      await sleep(5000);
      const next = [];
      for (const i of pending) {
        const s = await statusOf(i);
        if (s) seen.set(i, s);
        if (!s || s.status === "scheduled" || s.status === "firing") next.push(i);
      }
      pending = next;
    }
    for (const i of unsettled.slice(0, 5)) {
      const w = wakeups[i];
      const res = await fetch(`${w.shard.url}/v1/wakeups/${w.id}/deliveries`, { headers: headersOf(w) });
      const got = arrivals.filter((a) => a.i === i).map((a) => new Date(a.t).toISOString());
      log(
        `#${i} ${w.id} due ${new Date(w.at).toISOString()}, received ${got.join(", ") || "never"}, now ` +
          `${seen.get(i).status}; attempt log: ${(await res.text()).slice(0, 1500)}`,
      );
    }
    const later = {};
    for (const i of unsettled) later[seen.get(i).status] = (later[seen.get(i).status] ?? 0) + 1;
    const alarmLate = [];
    const queueLag = [];
    const firedAt = [];
    let idMismatch = 0;
    for (const [i, s] of seen) {
      const a = firstArrival.get(i);
      if (s.fired_at) firedAt.push(Date.parse(s.fired_at) - windowStart);
      if (s.fired_at) alarmLate.push(Date.parse(s.fired_at) - wakeups[i].at);
      if (a && s.fired_at) queueLag.push(a.t - Date.parse(s.fired_at));
      if (a && s.delivery_id !== a.webhookId) idMismatch++;
    }
    const fired = percentiles(firedAt);
    const came = percentiles([...firstArrival.values()].map((a) => a.t - windowStart));
    statusLines = [
      `timeline from the window's start: alarms fired from ${seconds(fired.min)} to ${seconds(fired.max)}` +
        `, deliveries arrived from ${seconds(came.min)} to ${seconds(came.max)}`,
      `alarm lateness (fired_at − at): ${fmt(percentiles(alarmLate))}`,
      `queue lag (arrival − fired_at): ${fmt(percentiles(queueLag))}`,
      `statuses after the grace period: ${JSON.stringify(states)}; ${created.length - seen.size}` +
        ` reads failed; webhook-id ≠ delivery_id: ${idMismatch}` +
        (unsettled.length
          ? `; the ${unsettled.length} not delivered then, ${seconds(settleMs)} later: ${JSON.stringify(later)}`
          : ""),
    ];
  }

  // Count every arrival, including any that came while the statuses were read.
  const byId = new Map();
  const byWakeup = new Map();
  for (const a of arrivals) {
    byId.set(a.webhookId, (byId.get(a.webhookId) ?? 0) + 1);
    byWakeup.set(a.i, (byWakeup.get(a.i) ?? 0) + 1);
  }
  const dupIds = [...byId.values()].filter((n) => n > 1).length;
  const dupWakeups = [...byWakeup.values()].filter((n) => n > 1).length;
  const missing = wakeups.map((w, i) => (w && !byWakeup.has(i) ? i : -1)).filter((i) => i >= 0);
  const first = [...firstArrival.values()];
  const lateness = percentiles(first.map((a) => a.t - wakeups[a.i].at));
  const early = first.filter((a) => a.t < wakeups[a.i].at).length;
  const invalid = arrivals.filter((a) => !a.valid).length;
  const lastArrival = first.reduce((m, a) => Math.max(m, a.t), 0);
  const span = first.length ? (lastArrival - first.reduce((m, a) => Math.min(m, a.t), Infinity)) / 1000 : 0;

  const createSeconds = (createEnd - createStart) / 1000;
  console.log(
    `\n${count} wakeups due within ${seconds(windowMs)} over ${shards} wrangler dev, ${concurrency}` +
      ` creates in flight, ${new Date().toISOString()}\n`,
  );
  console.log(
    `create: ${created.length} in ${createSeconds.toFixed(1)} s = ` +
      `${(created.length / createSeconds).toFixed(0)} creates/s (probe ${probeRate.toFixed(0)}/s); ` +
      `${createFailures} failed, ${proxyRetries} dev-proxy 503s sent again; created after their time: ` +
      `${createdLate}; fire_at ≠ at asked: ${wrongTime}`,
  );
  console.log(`window opened ${seconds(windowStart - createEnd)} after the last create`);
  console.log(
    `delivered: ${byWakeup.size} of ${created.length} wakeups (${arrivals.length} requests), missing ` +
      `${missing.length}${missing.length ? ` e.g. ${missing.slice(0, 5).join(", ")}` : ""}`,
  );
  console.log(
    `duplicates: ${dupIds} webhook-ids seen more than once, ${dupWakeups} wakeups delivered more than once ` +
      `(${arrivals.length - countedUntil} requests came after the grace period); bad signatures: ${invalid}` +
      `; stray requests: ${strayRequests}`,
  );
  console.log(`lateness (arrival − at): ${fmt(lateness)}; arrived early: ${early}`);
  console.log(
    `arrivals spread over ${span.toFixed(1)} s (${(byWakeup.size / Math.max(span, 1)).toFixed(0)}/s)` +
      `${allArrived ? `, the last ${seconds(lastArrival - windowEnd)} after the window closed` : ""}`,
  );
  console.log(
    `load average (1 min) during the run: median ${percentiles(loads).p50.toFixed(1)}, max ` +
      `${percentiles(loads).max.toFixed(1)} on ${availableParallelism()} cores`,
  );
  for (const line of statusLines) console.log(line);
  failed = missing.length > 0 || dupIds > 0 || dupWakeups > 0 || invalid > 0 || createFailures > 0 || strayRequests > 0;
} finally {
  for (const service of services) await service.stop();
  receiver.close();
  await rm(sourceDir, { recursive: true, force: true });
}
if (failed) process.exitCode = 1;
