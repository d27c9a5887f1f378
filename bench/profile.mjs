#!/usr/bin/env node
/**
 * Where a paid call's time goes: a CPU profile of the worker and its Durable Objects (one isolate under `wrangler dev`)
 * while autocannon loads one target, taken through the V8 inspector, summed by function (self time) and by module of
 * the source.
 *
 *   npm run bench:profile (paid increment, 8 s) BENCH_TARGET=paid-read BENCH_SECONDS=8 npm run bench:profile
 *
 * Targets: paid-increment, paid-read, free-read, inbox-ingest (a public POST of 1 KiB of JSON), site-asset (a 10 KiB
 * file of a site). The rate limits are raised as in counters.mjs.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import autocannon from "autocannon";
import { strToU8, zipSync } from "fflate";
import { startWranglerDev } from "../scripts/wrangler-dev.mjs";
import { bundleSourceMap, inspector, postJson } from "./lib.mjs";

const seconds = Number(process.env.BENCH_SECONDS ?? 8);
const target = process.env.BENCH_TARGET ?? "paid-increment";
const connections = Number(process.env.BENCH_CONNECTIONS ?? 20);
const run = promisify(execFile);

/**
 * Self time per function and per source file, and inclusive ("total") time per source file: each
 * sample counts once for every file on its stack, so a file's total is the share of CPU spent in it
 * or in what it called.
 */
function summarise(profile, fileOf, lineOf) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const self = new Map();
  for (let i = 0; i < profile.samples.length; i++)
    self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0));
  const place = ({ callFrame }) => {
    if (!callFrame.url) return callFrame.functionName || "(native)";
    return callFrame.url.endsWith("worker.js")
      ? fileOf(callFrame.scriptId, callFrame.lineNumber)
      : callFrame.url.split("/").slice(-2).join("/");
  };
  const byFunction = new Map();
  const byFile = new Map();
  const inclusive = new Map();
  let total = 0;
  for (const [nodeId, us] of self) {
    const node = nodes.get(nodeId);
    const { callFrame } = node;
    const anonymous =
      !callFrame.functionName && callFrame.url.endsWith("worker.js")
        ? ` ${lineOf(callFrame.scriptId, callFrame.lineNumber)}`
        : "";
    const name = (
      `${callFrame.functionName || "(anonymous)"} ` +
      `${callFrame.url ? `${place(node)}:${callFrame.lineNumber + 1}` : ""}${anonymous}`
    ).trim();
    // A native frame (a Response, a binding's setter) is named with what called it.
    const caller = !callFrame.url && parent.has(nodeId) ? nodes.get(parent.get(nodeId)).callFrame : null;
    const from = caller
      ? (
          ` ← ${caller.functionName || "(anonymous)"} ` +
          `${caller.url ? `${place(nodes.get(parent.get(nodeId)))}` : ""}`
        ).trimEnd()
      : "";
    byFunction.set(name + from, (byFunction.get(name + from) ?? 0) + us);
    byFile.set(place(node), (byFile.get(place(node)) ?? 0) + us);
    const seen = new Set();
    for (let id = nodeId; id !== undefined; id = parent.get(id)) seen.add(place(nodes.get(id)));
    for (const file of seen) inclusive.set(file, (inclusive.get(file) ?? 0) + us);
    total += us;
  }
  const top = (map, n) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, us]) => `| ${((us / total) * 100).toFixed(1)}% | ${(us / 1000).toFixed(0)} ms | \`${k}\` |`);
  return {
    total,
    functions: top(byFunction, Number(process.env.BENCH_TOP ?? 30)),
    files: top(byFile, 25),
    inclusive: top(inclusive, 40),
  };
}

const service = await startWranglerDev({ rateLimitPerMinute: 1_000_000 });
try {
  const { stdout } = await run("node", ["scripts/buy.mjs", "1000"], {
    env: { ...process.env, ZEITVAULT_URL: service.url },
  });
  const token = stdout.trim();
  const counter = await postJson(
    `${service.url}/v1/counters`,
    { ttl_seconds: 86400 },
    { authorization: `Bearer ${token}` },
  );
  const inbox = await postJson(
    `${service.url}/v1/inboxes`,
    { ttl_seconds: 86400 },
    { authorization: `Bearer ${token}` },
  );
  const site = await postJson(`${service.url}/v1/sites`, { ttl_seconds: 86400 }, { authorization: `Bearer ${token}` });
  const deployed = await fetch(`${service.url}/v1/sites/${site.id}/deploy`, {
    method: "PUT",
    body: zipSync({
      "index.html": strToU8("<h1>bench</h1>"),
      "assets/app.css": strToU8("body { color: #123456; }\n".repeat(420)),
    }),
    headers: {
      authorization: `Bearer ${site.management_token}`,
      "x-credit-token": token,
      "content-type": "application/zip",
    },
  });
  if (!deployed.ok) throw new Error(`deploy: ${deployed.status} ${await deployed.text()}`);
  const paid = { authorization: `Bearer ${counter.management_token}`, "x-credit-token": token };
  const targets = {
    "paid-increment": { method: "POST", url: `${service.url}/v1/counters/${counter.id}/increment`, headers: paid },
    "paid-read": { method: "GET", url: `${service.url}/v1/counters/${counter.id}`, headers: paid },
    "free-read": {
      method: "GET",
      url: `${service.url}/v1/resources/${counter.id}`,
      headers: { authorization: `Bearer ${counter.management_token}` },
    },
    "site-asset": { method: "GET", url: `${site.urls.public}/assets/app.css` },
    "inbox-ingest": {
      method: "POST",
      url: inbox.urls.public,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ event: "ping", pad: "x".repeat(1000) }),
    },
  };
  const chosen = targets[target];
  if (!chosen) throw new Error(`BENCH_TARGET must be one of ${Object.keys(targets).join(", ")}`);
  await autocannon({ ...chosen, connections, duration: 3 }); // warm-up

  const cdp = await inspector(await service.inspectorUrl());
  // The debugger hands out the bundle's source, to name the file of each frame.
  const scripts = new Map();
  cdp.onScript = (params) => params.url.endsWith("worker.js") && scripts.set(params.scriptId, null);
  await cdp.send("Debugger.enable");
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
  await cdp.send("Profiler.start");
  const result = await autocannon({ ...chosen, connections, duration: seconds });
  const { profile } = await cdp.send("Profiler.stop");
  for (const scriptId of scripts.keys())
    scripts.set(scriptId, bundleSourceMap((await cdp.send("Debugger.getScriptSource", { scriptId })).scriptSource));
  cdp.close();

  const fileOf = (scriptId, line) => scripts.get(scriptId)?.fileOf(line) ?? "(bundle)";
  const lineOf = (scriptId, line) => scripts.get(scriptId)?.lineOf(line) ?? "";
  const { total, functions, files, inclusive } = summarise(profile, fileOf, lineOf);
  console.log(
    `\n${target}: ${result.requests.average.toFixed(0)} req/s over ${seconds} s, ${connections}` +
      ` connections; ${(total / 1000).toFixed(0)} ms of samples in the isolate (idle included)\n`,
  );
  console.log("| self | time | source file |\n|---|---|---|\n" + files.join("\n"));
  console.log("\n| total | time | source file (self and callees) |\n|---|---|---|\n" + inclusive.join("\n"));
  console.log("\n| self | time | function |\n|---|---|---|\n" + functions.join("\n"));
} finally {
  await service.stop();
}
