#!/usr/bin/env node
/**
 * Crash recovery that shows locally: wakeups fire, the runtime is killed (SIGKILL, wrangler and its
 * workerd processes at once) while their deliveries are on the local queue, and it is started again on
 * the same state. Every wakeup must reach the receiver, and within BENCH_RECOVERY_SECONDS (120) of the
 * restart, though the local queue kept the accepted messages in memory only.
 *
 *   npm run bench:crash                       (200 wakeups)
 *   BENCH_WAKEUPS=50 BENCH_RECOVERY_SECONDS=120 BENCH_RECEIVER_DELAY_MS=3000 npm run bench:crash
 *
 * The receiver holds each request BENCH_RECEIVER_DELAY_MS before it answers, so at the kill most fired
 * wakeups are on the queue or in the consumer's hands, not delivered. It records each webhook-id; a
 * repeat after the restart is expected (at least once), a wakeup that never arrives is a failure.
 * Exit code 1 when any wakeup is missing or late.
 */
import { createServer } from "node:http";
import { rm } from "node:fs/promises";
import { startWranglerDev } from "../scripts/wrangler-dev.mjs";
import { buyCredits, log, pool, sleep, snapshotSource } from "./lib.mjs";

const env = process.env;
const count = Number(env.BENCH_WAKEUPS ?? 200);
const recoveryMs = Number(env.BENCH_RECOVERY_SECONDS ?? 120) * 1000;
const delayMs = Number(env.BENCH_RECEIVER_DELAY_MS ?? 3000);
const VARS = { ENVIRONMENT: "development", X402_SETTLEMENT: "none", ALLOW_PRIVATE_TARGETS: "true" };

const arrivals = new Map(); // i → [time, …]
const receiver = createServer((req, res) => {
  const i = Number(/^\/w\/(\d+)$/.exec(req.url ?? "")?.[1] ?? NaN);
  req.resume();
  req.on("end", () => {
    if (!arrivals.has(i)) arrivals.set(i, []);
    arrivals.get(i).push({ t: Date.now(), id: String(req.headers["webhook-id"]) });
    setTimeout(() => res.writeHead(200).end("ok"), delayMs);
  });
});
await new Promise((r) => receiver.listen(0, "127.0.0.1", r));
const receiverUrl = `http://127.0.0.1:${receiver.address().port}`;

const sourceDir = await snapshotSource(env.BENCH_SOURCE ?? "worktree");
process.chdir(sourceDir);
let service = await startWranglerDev({ rateLimitPerMinute: 1_000_000, vars: VARS });
const { state, url } = service;
const port = Number(new URL(url).port);
let failed = true;
try {
  const token = await buyCredits(url, 5);
  // Due together, a little after the last create: the kill lands while they are being delivered.
  const due = Date.now() + 15_000 + count * 40;
  const wakeups = [];
  await pool(count, 16, async (i) => {
    const res = await fetch(`${url}/v1/wakeups`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({
        url: `${receiverUrl}/w/${i}`,
        at: new Date(due + (i % 20) * 100).toISOString(),
        ttl_seconds: 3600,
      }),
    });
    if (res.status !== 201) throw new Error(`create ${i}: ${res.status} ${await res.text()}`);
    wakeups[i] = await res.json();
  });
  log(`${count} wakeups created, due in ${((due - Date.now()) / 1000).toFixed(1)} s`);
  // Kill once the first deliveries arrive: the rest are fired and queued, or about to be.
  while (arrivals.size === 0) await sleep(50);
  await sleep(500);
  const before = arrivals.size;
  await service.kill();
  const killedAt = Date.now();
  log(`killed with ${before} of ${count} arrived (their answers held ${delayMs} ms, so none was reported)`);
  await sleep(2000);
  service = await startWranglerDev({ rateLimitPerMinute: 1_000_000, vars: VARS, state, port });
  const restartedAt = Date.now();
  log(`restarted in ${((restartedAt - killedAt) / 1000).toFixed(1)} s`);
  // A wakeup counts once it arrived, before the kill (its answer unreported) or after the restart.
  while (Date.now() - restartedAt < recoveryMs && arrivals.size < count) await sleep(250);
  const arrivedBy = Date.now();
  const late = wakeups.map((_, i) => i).filter((i) => !arrivals.has(i));
  const afterRestart = [...arrivals.values()].flat().filter((a) => a.t >= restartedAt);
  const lastAt = afterRestart.reduce((m, a) => Math.max(m, a.t), restartedAt);
  // Statuses, once things settle: each wakeup's delivery must end delivered.
  await sleep(Math.min(15_000, recoveryMs));
  const statuses = {};
  await pool(count, 16, async (i) => {
    const w = wakeups[i];
    const res = await fetch(`${url}/v1/wakeups/${w.id}`, {
      headers: { authorization: `Bearer ${w.management_token}`, "x-credit-token": token },
    });
    const s = res.ok ? (await res.json()).status : `HTTP ${res.status}`;
    statuses[s] = (statuses[s] ?? 0) + 1;
  });
  const distinctIds = new Set([...arrivals.values()].flat().map((a) => a.id)).size;
  console.log(
    `\n${count} wakeups, killed mid-firing (${before} had arrived), restarted on the same state, ` +
      `${new Date().toISOString()}\n`,
  );
  console.log(
    `arrived: ${arrivals.size} of ${count} within ${((arrivedBy - restartedAt) / 1000).toFixed(1)}` +
      ` s of the restart (limit ${recoveryMs / 1000} s); missing ${late.length}` +
      `${late.length ? ` e.g. ${late.slice(0, 5).join(", ")}` : ""}`,
  );
  console.log(
    `requests after the restart: ${afterRestart.length} (the last ` +
      `${((lastAt - restartedAt) / 1000).toFixed(1)} s after it); distinct webhook-ids ${distinctIds}`,
  );
  console.log(`statuses: ${JSON.stringify(statuses)}`);
  failed = late.length > 0;
} finally {
  await service.stop();
  await rm(state, { recursive: true, force: true });
  receiver.close();
  await rm(sourceDir, { recursive: true, force: true });
}
if (failed) process.exitCode = 1;
