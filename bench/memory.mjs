#!/usr/bin/env node
/**
 * Memory kinds at 0 and at ~100,000 stored items, under `wrangler dev` on this machine: per-call latency
 * of journal append / range read / tail, queue push / lease / ack and vault get / put (issue 5's benchmark).
 *
 *   npm run bench:memory                          (1,000 samples per operation and size, after 100 warm-up rounds)
 *   BENCH_SAMPLES=200 BENCH_WARMUP=20 BENCH_KINDS=queues npm run bench:memory      (a quick look)
 *   BENCH_FILL=99900 BENCH_CONCURRENCY=4 BENCH_SOURCE=head …
 *
 * For each kind it creates two resources: a small one (a journal or vault seeded with 100 items, an empty
 * queue) and a full one, filled with the batch operations (BENCH_CONCURRENCY batches of 100 in flight) to
 * ~100,000 items, each kind's cap. Then it measures both in the same loop, one sequential request at a
 * time, alternating which resource goes first in each round, so both sizes meet the same load from the
 * rest of this shared machine and the ratio compares like with like. Every call is a real paid call
 * (management token plus X-CREDIT-TOKEN), timed from the request to the last byte of the answer.
 *
 * Per round and resource:
 *   journals: append one entry; read 100 entries from a random seq; tail (the last 10 entries).
 *             The full journal is filled to 100,000 minus the rounds, so its last round reaches the cap.
 *   queues:   push one message; lease 1 (the oldest visible); ack that lease. The size stays constant.
 *   vaults:   get a random existing key; put a random existing key (small values: 8 MiB per vault).
 */
import { availableParallelism, cpus } from "node:os";
import { rm } from "node:fs/promises";
import { startWranglerDev } from "../scripts/wrangler-dev.mjs";
import { buyCredits, log, loadSampler, otherActivity, percentiles, pool, run, sleep, snapshotSource } from "./lib.mjs";

const samples = Number(process.env.BENCH_SAMPLES ?? 1000);
const warmup = Number(process.env.BENCH_WARMUP ?? 100);
const fillTarget = Number(process.env.BENCH_FILL ?? 99_900);
const fillConcurrency = Number(process.env.BENCH_CONCURRENCY ?? 4);
const kindNames = (process.env.BENCH_KINDS ?? "journals,queues,vaults")
  .split(",")
  .map((k) => k.trim())
  .filter(Boolean);
const source = process.env.BENCH_SOURCE ?? "worktree";

/** Items a journal or queue holds at most, and keys a vault holds at most. */
const CAP = 100_000;
const BATCH = 100;
const SEED = 100;
const rounds = warmup + samples;

// ---- HTTP ----

let proxyRetries = 0;

/**
 * One call, timed from the request to the last byte of the answer. The dev proxy sometimes answers 503
 * "restarted mid-request" without reaching the worker (nothing is charged): that call is sent again.
 */
async function call(base, method, path, headers, body) {
  for (let attempt = 1; ; attempt++) {
    const started = performance.now();
    const res = await fetch(`${base}${path}`, {
      method,
      headers: body === undefined ? headers : { ...headers, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(120_000),
    });
    const text = await res.text();
    const ms = performance.now() - started;
    if (res.ok) return { ms, data: JSON.parse(text) };
    if (res.status === 503 && text.includes("restarted mid-request") && attempt < 4) {
      proxyRetries++;
      await sleep(200 * attempt);
      continue;
    }
    throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  }
}

const randomInt = (lo, hi) => lo + Math.floor(Math.random() * (hi - lo + 1)); // inclusive

// ---- the kinds ----

/**
 * Each kind: how to count what a resource holds, how many items the small one is seeded with and the full
 * one filled to, one fill batch, and one measured round (`time(op, promise)` records a call's latency).
 */
const KINDS = {
  journals: {
    unit: "entries",
    ops: ["append", "read", "tail"],
    seed: SEED,
    // Every round appends one entry: the full journal ends exactly at the cap.
    fillTo: Math.min(fillTarget, CAP - rounds),
    count: async (api, r) => (await api(r, "GET", "")).data.head_seq,
    async fill(api, r, from, n) {
      const entries = Array.from({ length: n }, (_, k) => ({ data: { n: from + k } }));
      await api(r, "POST", "/entries/batch", { entries });
    },
    async round(api, r, i, time) {
      const appended = await time("append", api(r, "POST", "/entries", { data: { n: i, bench: true } }));
      const head = appended.seq;
      const page = await time("read", api(r, "GET", `/entries?from_seq=${randomInt(1, head - 99)}&limit=100`));
      if (page.items.length !== 100) throw new Error(`journal read returned ${page.items.length} entries, not 100`);
      const tail = await time("tail", api(r, "GET", `/tail?after_seq=${head - 10}&limit=100`));
      if (tail.items.length !== 10) throw new Error(`journal tail returned ${tail.items.length} entries, not 10`);
    },
  },
  queues: {
    unit: "messages",
    ops: ["push", "lease", "ack"],
    seed: 0,
    fillTo: Math.min(fillTarget, CAP - 1),
    count: async (api, r) => (await api(r, "GET", "/stats")).data.messages,
    async fill(api, r, from, n) {
      const messages = Array.from({ length: n }, (_, k) => ({ body: { n: from + k } }));
      await api(r, "POST", "/messages/batch", { messages });
    },
    // Push one, lease one (the oldest visible), ack it: the queue's size is the same after each round.
    async round(api, r, i, time) {
      await time("push", api(r, "POST", "/messages", { body: { n: i, bench: true } }));
      const leased = await time("lease", api(r, "POST", "/leases", { max_messages: 1 }));
      if (leased.items.length !== 1) throw new Error(`queue lease returned ${leased.items.length} messages, not 1`);
      await time("ack", api(r, "POST", `/leases/${leased.items[0].lease_id}/ack`, {}));
    },
  },
  vaults: {
    unit: "keys",
    ops: ["get", "put"],
    seed: SEED,
    fillTo: Math.min(fillTarget, CAP),
    count: async (api, r) => (await api(r, "GET", "")).data.keys,
    async fill(api, r, from, n) {
      const operations = Array.from({ length: n }, (_, k) => ({
        op: "put",
        key: vaultKey(from + k),
        value: { n: from + k, v: "abcdefgh" },
      }));
      await api(r, "POST", "/batch", { operations });
    },
    async round(api, r, i, time) {
      const got = await time("get", api(r, "GET", `/keys/${vaultKey(randomInt(0, r.items - 1))}`));
      if (got.value === undefined) throw new Error("vault get returned no value");
      await time(
        "put",
        api(r, "PUT", `/keys/${vaultKey(randomInt(0, r.items - 1))}`, { value: { n: i, v: "ijklmnop" } }),
      );
    },
  },
};

const vaultKey = (i) => `k${String(i).padStart(6, "0")}`;

for (const name of kindNames) if (!KINDS[name]) throw new Error(`unknown kind ${name}: use journals, queues, vaults`);

// ---- the run ----

/** A resource of `kind` with its management token, and how many items it held when it was last counted. */
async function createResource(base, token, kind) {
  const { data } = await call(
    base,
    "POST",
    `/v1/${kind}`,
    { authorization: `Bearer ${token}` },
    { ttl_seconds: 86_400 },
  );
  return { kind, id: data.id, mgmt: data.management_token, items: 0 };
}

/** Adds items to `r` until it holds `target`, in batches of 100, `concurrency` in flight. */
async function fillTo(api, spec, r, target, concurrency) {
  const start = r.items;
  const batches = Math.ceil((target - start) / BATCH);
  await pool(batches, concurrency, async (b) => {
    const from = start + b * BATCH;
    await spec.fill(api, r, from, Math.min(BATCH, target - from));
  });
  r.items = await spec.count(api, r);
  if (r.items !== target) throw new Error(`${r.kind} ${r.id} holds ${r.items}, not ${target}`);
}

const fmt = (v) => (Number.isFinite(v) ? v.toFixed(1) : "–");

async function benchKind(base, token, name) {
  const spec = KINDS[name];
  const api = (r, method, path, body) =>
    call(
      base,
      method,
      `/v1/${name}/${r.id}${path}`,
      { authorization: `Bearer ${r.mgmt}`, "x-credit-token": token },
      body,
    );
  const small = await createResource(base, token, name);
  const full = await createResource(base, token, name);
  if (spec.seed) await fillTo(api, spec, small, spec.seed, 1);
  const fillStart = Date.now();
  await fillTo(api, spec, full, spec.fillTo, fillConcurrency);
  const fillSeconds = (Date.now() - fillStart) / 1000;
  log(
    `${name}: filled ${full.items} ${spec.unit} in ${fillSeconds.toFixed(0)} s (` +
      `${(full.items / fillSeconds).toFixed(0)}/s)`,
  );
  await sleep(2000);

  const before = await otherActivity();
  const held = { small: [small.items], full: [full.items] };
  const times = { small: {}, full: {} };
  for (const op of spec.ops) times.small[op] = [];
  for (const op of spec.ops) times.full[op] = [];
  const measureStart = Date.now();
  for (let i = 0; i < rounds; i++) {
    const order = i % 2 === 0 ? ["small", "full"] : ["full", "small"];
    for (const which of order) {
      const r = which === "small" ? small : full;
      const time = async (op, pending) => {
        const { ms, data } = await pending;
        if (i >= warmup) times[which][op].push(ms);
        return data;
      };
      await spec.round(api, r, i, time);
    }
    if (i % 200 === 199) log(`${name}: round ${i + 1}/${rounds}`);
  }
  const measureSeconds = (Date.now() - measureStart) / 1000;
  small.items = await spec.count(api, small);
  full.items = await spec.count(api, full);
  held.small.push(small.items);
  held.full.push(full.items);
  const after = await otherActivity();

  const rows = spec.ops.map((op) => {
    const s = percentiles(times.small[op]);
    const f = percentiles(times.full[op]);
    return { kind: name, op, s, f };
  });
  return { name, spec, rows, held, fillSeconds, measureSeconds, before, after };
}

const { stdout: revision } = await run("git", ["rev-parse", "--short", "HEAD"]);
const { stdout: dirty } = await run("git", ["status", "--porcelain", "--", "src", "durable-objects"]);
const sourceDir = await snapshotSource(source);
process.chdir(sourceDir);
const load = loadSampler();
const startedBefore = await otherActivity();
let service;
try {
  // One credential and one address send far more than the production limits here (fills especially).
  service = await startWranglerDev({ rateLimitPerMinute: 1_000_000 });
  const { stdout: wranglerVersion } = await run("node_modules/.bin/wrangler", ["--version"], {
    env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
  });
  // Fills (at most $0.04 per 100 items) plus the measured calls ($0.0001–$0.0002 each), with room to spare.
  const dollars = Math.min(
    1000,
    Math.ceil(kindNames.length * ((CAP / BATCH) * 0.004 + rounds * 2 * 3 * 0.0002) * 1.5 + 1),
  );
  const token = await buyCredits(service.url, dollars);
  log(
    `service ${service.url} (${source === "head" ? "commit" : "working tree at"} ${revision.trim()}` +
      `${source !== "head" && dirty.trim() ? ", with uncommitted changes" : ""}), bought $${dollars}`,
  );
  log(`others before the start: ${startedBefore.text}`);

  const results = [];
  for (const name of kindNames) results.push(await benchKind(service.url, token, name));
  load.stop();

  console.log(
    `\n${samples} samples per operation and size after ${warmup} warm-up rounds, sequential, ` +
      `${new Date().toISOString()}`,
  );
  console.log(
    `machine: ${availableParallelism()} cores (${cpus()[0]?.model.trim()}), Node ${process.version}` +
      `, wrangler ${wranglerVersion.trim()}, local SQLite-backed Durable Objects`,
  );
  console.log(
    `source: ${source === "head" ? "commit" : "working tree at"} ${revision.trim()}` +
      `${source !== "head" && dirty.trim() ? " (with uncommitted changes in src/ or durable-objects/)" : ""}`,
  );
  console.log(
    `load average (1 min) during the run: median ${percentiles(load.samples).p50.toFixed(2)}, max ` +
      `${Math.max(...load.samples).toFixed(2)}; dev-proxy 503s sent again: ${proxyRetries}\n`,
  );
  console.log(
    "| kind | operation | small: p50 / p90 / p99 ms | ~100k: p50 / p90 / p99 ms | ratio p50 | ratio p90 | ratio p99 |",
  );
  console.log("|---|---|---|---|---|---|---|");
  for (const { rows } of results) {
    for (const { kind, op, s, f } of rows) {
      console.log(
        `| ${kind} | ${op} | ${fmt(s.p50)} / ${fmt(s.p90)} / ${fmt(s.p99)} | ${fmt(f.p50)} / ${fmt(f.p90)}` +
          ` / ${fmt(f.p99)} | ${(f.p50 / s.p50).toFixed(2)} | ${(f.p90 / s.p90).toFixed(2)} | ` +
          `${(f.p99 / s.p99).toFixed(2)} |`,
      );
    }
  }
  console.log("");
  for (const r of results) {
    console.log(
      `${r.name}: small held ${r.held.small.join(" → ")} ${r.spec.unit}, full ${r.held.full.join(" → ")}` +
        `; filled in ${r.fillSeconds.toFixed(0)} s; ` +
        `measured in ${r.measureSeconds.toFixed(0)} s; others before: ${r.before.text}; after: ${r.after.text}`,
    );
  }
  const worst = results
    .flatMap((r) => r.rows)
    .map((row) => ({ ...row, ratio: Math.max(row.f.p50 / row.s.p50, row.f.p99 / row.s.p99) }));
  const over = worst.filter((row) => row.ratio > 1.5);
  const misses = over.map((r) => `${r.kind} ${r.op} (${r.ratio.toFixed(2)}×)`).join(", ");
  console.log(
    `\ntarget (100k within 1.5× of small at p50 and p99): ` +
      `${over.length ? `missed by ${misses}` : "met by every operation"}`,
  );
} finally {
  load.stop();
  await service?.stop();
  process.chdir("/");
  await rm(sourceDir, { recursive: true, force: true });
}
