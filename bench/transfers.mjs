#!/usr/bin/env node
/**
 * Transfer throughput: a 200 MiB object copied S3 → objects by the transfers kind under `wrangler dev`
 * (the resource's alarm moving 16 MiB parts: a ranged GET from S3 streamed into an R2 multipart part,
 * through the transfer's SHA-256), from a local S3-compatible server (s3rver, from npm, on loopback),
 * timed from the start call to `completed`. Memory is sampled every 200 ms before and during the copy, two
 * ways: the isolate's own (V8's heap and the ArrayBuffers it holds, through the inspector: what a Worker's
 * 128 MB limit counts), to show it stays flat (the object is never held whole), and the resident memory of
 * the workerd processes (the local runtime's buffers and allocator besides).
 *
 *   npm run bench:transfers                 (200 MiB, S3 → objects)
 *   BENCH_MIB=400 BENCH_DEST=s3 npm run bench:transfers
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { AwsClient } from "aws4fetch";
import S3rver from "s3rver";
import { startWranglerDev } from "../scripts/wrangler-dev.mjs";
import { buyCredits, inspector, log, run, sleep } from "./lib.mjs";

const mib = Number(process.env.BENCH_MIB ?? 200);
const size = mib * 1024 * 1024;
const BUCKET = "bench";
/**
 * `object` (the S3 → objects) or `s3` (S3 → S3: the Worker's part of the work without the local R2
 * simulator).
 */
const destination = process.env.BENCH_DEST ?? "object";

/** Resident memory (KiB) of the workerd processes this script started. */
async function workerdRss() {
  const { stdout } = await run("ps", ["-eo", "pid=,ppid=,rss=,args="], { maxBuffer: 16 << 20 });
  const all = stdout
    .split("\n")
    .map((l) => /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(.*)$/.exec(l))
    .filter(Boolean)
    .map((m) => ({ pid: +m[1], ppid: +m[2], rss: +m[3], args: m[4] }));
  const parent = new Map(all.map((p) => [p.pid, p.ppid]));
  const ours = (pid) => {
    for (let at = pid, hops = 0; at > 1 && hops < 64; at = parent.get(at) ?? 0, hops++)
      if (at === process.pid) return true;
    return false;
  };
  return all.filter((p) => /bin\/workerd /.test(p.args) && ours(p.pid)).reduce((sum, p) => sum + p.rss, 0);
}

// startWranglerDev runs the project's workerd (the tests' 1.20261023), as `npm run dev` does: wrangler 4.86's bundled
// 1.20260426 loops opening sockets (thousands a second, until "Too many open files") once a transfer's streamed
// parts pass about 32 MiB (scripts/wrangler-dev.mjs).

const directory = await mkdtemp(path.join(tmpdir(), "zv-bench-s3-"));
const s3 = new S3rver({
  address: "127.0.0.1",
  port: 0,
  silent: true,
  directory,
  configureBuckets: [{ name: BUCKET, configs: [] }],
  vhostBuckets: false,
});
const { port } = await s3.run();
const endpoint = `http://127.0.0.1:${port}`;
const service = await startWranglerDev({ vars: { ALLOW_PRIVATE_TARGETS: "true" } });
try {
  const client = new AwsClient({
    accessKeyId: "S3RVER",
    secretAccessKey: "S3RVER",
    service: "s3",
    region: "us-east-1",
  });
  const body = Buffer.allocUnsafe(size);
  for (let i = 0; i < size; i += 4) body.writeUInt32LE((Math.imul(i, 2654435761) ^ (i >>> 11)) >>> 0, i);
  const put = await client.fetch(`${endpoint}/${BUCKET}/source.bin`, { method: "PUT", body });
  if (!put.ok) throw new Error(`seed: ${put.status}`);
  log(`seeded ${mib} MiB`);

  const token = await buyCredits(service.url, 10);
  const auth = { "content-type": "application/json", authorization: `Bearer ${token}` };
  const create = async (kind) =>
    (await fetch(`${service.url}/v1/${kind}`, { method: "POST", headers: auth, body: "{}" })).json();
  const [transfers, target] = [await create("transfers"), await create("objects")];
  const ops = {
    "content-type": "application/json",
    authorization: `Bearer ${transfers.management_token}`,
    "x-credit-token": token,
  };

  const cdp = await inspector(await service.inspectorUrl());
  /** The isolate's memory (MiB): V8's heap in use, and the ArrayBuffers' backing stores (stream chunks live there). */
  const isolate = async () => {
    const heap = await cdp.send("Runtime.getHeapUsage");
    return { heap: heap.usedSize / 2 ** 20, buffers: (heap.backingStorageSize ?? NaN) / 2 ** 20 };
  };
  const samples = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      samples.push({ at: performance.now(), rss: await workerdRss(), ...(await isolate()) });
      await sleep(200);
    }
  })();
  await sleep(1000);
  const idle = samples.at(-1);
  const started = performance.now();
  const res = await fetch(`${service.url}/v1/transfers/${transfers.id}/transfers`, {
    method: "POST",
    headers: ops,
    body: JSON.stringify({
      source: {
        type: "s3",
        endpoint,
        bucket: BUCKET,
        key: "source.bin",
        access_key_id: "S3RVER",
        secret_access_key: "S3RVER",
      },
      destination:
        destination === "s3"
          ? {
              type: "s3",
              endpoint,
              bucket: BUCKET,
              key: "copy.bin",
              access_key_id: "S3RVER",
              secret_access_key: "S3RVER",
            }
          : { type: "object", management_token: target.management_token },
    }),
  });
  const t = await res.json();
  log(`started: ${res.status}`);
  if (!res.ok) throw new Error(`start: ${res.status} ${JSON.stringify(t)}`);
  let view = t;
  while (view.status === "running") {
    await sleep(500);
    view = await (
      await fetch(`${service.url}/v1/transfers/${transfers.id}/transfers/${t.transfer_id}`, { headers: ops })
    ).json();
    log(
      `${view.status}: ${view.bytes_moved} bytes moved, isolate heap ${samples.at(-1).heap.toFixed(1)}` +
        ` MiB + buffers ${samples.at(-1).buffers.toFixed(1)} MiB, workerd RSS ` +
        `${Math.round(samples.at(-1).rss / 1024)} MiB`,
    );
  }
  const seconds = (performance.now() - started) / 1000;
  sampling = false;
  await sampler;
  cdp.close();
  if (view.status !== "completed") throw new Error(`transfer ${view.status}: ${view.error}`);
  const during = samples.filter((s) => s.at >= started);
  const peak = (field) => Math.max(...during.map((s) => s[field]));
  // The local runtime sets the isolate no memory limit, so V8 collects late and the heap is a saw-tooth; its
  // floor (the lowest sample in each tenth of the copy, after a collection) is what the transfer still holds.
  const floors = Array.from({ length: 10 }, (_, i) => {
    const tenth = during.filter(
      (s) => s.at >= started + (i * seconds * 1000) / 10 && s.at < started + ((i + 1) * seconds * 1000) / 10,
    );
    return Math.min(...tenth.map((s) => s.heap + s.buffers));
  }).filter(Number.isFinite);
  const mb = (x) => `${x.toFixed(1)} MiB`;
  console.log(`S3 → ${destination}`);
  console.log(
    `| size | parts | seconds | MiB/s | isolate heap + buffers idle | peak | workerd RSS idle / peak | ` +
      `sha256 |\n|---|---|---|---|---|---|---|---|`,
  );
  console.log(
    `| ${mib} MiB | ${view.parts_total} | ${seconds.toFixed(1)} | ${(mib / seconds).toFixed(1)} | ` +
      `${mb(idle.heap + idle.buffers)} | ${mb(peak("heap"))} + ${mb(peak("buffers"))} | ` +
      `${Math.round(idle.rss / 1024)} / ${Math.round(peak("rss") / 1024)} MiB | ${view.sha256.slice(0, 12)}` +
      `… |`,
  );
  console.log(
    `isolate floor (heap + buffers) in each tenth of the copy: ${floors.map((f) => f.toFixed(1)).join(", ")} MiB`,
  );
} catch (err) {
  console.error(service.output().slice(-6000));
  throw err;
} finally {
  await service.stop();
  await s3.close();
  await rm(directory, { recursive: true, force: true });
}
