#!/usr/bin/env node
/**
 * Where a paid call's time goes: a CPU profile of the worker and its Durable Objects (one
 * isolate under `wrangler dev`) while autocannon loads one target, taken through the V8
 * inspector, summed by function (self time) and by module of the source.
 *
 *   npm run bench:profile                                  (paid increment, 8 s)
 *   BENCH_TARGET=paid-read BENCH_SECONDS=8 npm run bench:profile
 *
 * Targets: paid-increment, paid-read, free-read. The rate limits are raised as in counters.mjs.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import autocannon from "autocannon";
import WebSocket from "ws";
import { freePort, startWranglerDev } from "../scripts/wrangler-dev.mjs";

const seconds = Number(process.env.BENCH_SECONDS ?? 8);
const target = process.env.BENCH_TARGET ?? "paid-increment";
const connections = Number(process.env.BENCH_CONNECTIONS ?? 20);
const run = promisify(execFile);

async function post(url, body, headers) {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** A minimal Chrome DevTools Protocol client over the inspector's WebSocket. */
async function inspector(port) {
  const targets = await (await fetch(`http://127.0.0.1:${port}/json`)).json();
  const url = targets.find((t) => t.webSocketDebuggerUrl)?.webSocketDebuggerUrl;
  if (!url) throw new Error(`no inspector target on port ${port}: ${JSON.stringify(targets)}`);
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
  let id = 0;
  const waiting = new Map();
  ws.on("message", (data) => {
    const msg = JSON.parse(String(data));
    if (msg.id && waiting.has(msg.id)) {
      waiting.get(msg.id)(msg);
      waiting.delete(msg.id);
    }
  });
  const send = (method, params = {}) =>
    new Promise((resolve, reject) => {
      const n = ++id;
      waiting.set(n, (msg) => (msg.error ? reject(new Error(`${method}: ${msg.error.message}`)) : resolve(msg.result)));
      ws.send(JSON.stringify({ id: n, method, params }));
    });
  return { send, close: () => ws.close() };
}

/** Self time per node, from the samples and their intervals. */
function summarise(profile) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  for (let i = 0; i < profile.samples.length; i++) self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0));
  const byFunction = new Map();
  const byModule = new Map();
  let total = 0;
  for (const [nodeId, us] of self) {
    const { callFrame } = nodes.get(nodeId);
    const where = callFrame.url ? `${callFrame.url.split("/").slice(-2).join("/")}:${callFrame.lineNumber + 1}` : "";
    const name = `${callFrame.functionName || "(anonymous)"} ${where}`.trim();
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
    const module = callFrame.url ? callFrame.url.split("/").slice(-3).join("/") : callFrame.functionName || "(native)";
    byModule.set(module, (byModule.get(module) ?? 0) + us);
    total += us;
  }
  const top = (map, n) => [...map].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, us]) => `| ${((us / total) * 100).toFixed(1)}% | ${(us / 1000).toFixed(0)} ms | \`${k}\` |`);
  return { total, functions: top(byFunction, 30), modules: top(byModule, 15) };
}

const inspectorPort = await freePort();
const service = await startWranglerDev({ rateLimitPerMinute: 1_000_000, inspectorPort });
try {
  const { stdout } = await run("node", ["scripts/buy.mjs", "1000"], { env: { ...process.env, ZEITVAULT_URL: service.url } });
  const token = stdout.trim();
  const counter = await post(`${service.url}/v1/counters`, { ttl_seconds: 86400 }, { authorization: `Bearer ${token}` });
  const paid = { authorization: `Bearer ${counter.management_token}`, "x-credit-token": token };
  const targets = {
    "paid-increment": { method: "POST", url: `${service.url}/v1/counters/${counter.id}/increment`, headers: paid },
    "paid-read": { method: "GET", url: `${service.url}/v1/counters/${counter.id}`, headers: paid },
    "free-read": { method: "GET", url: `${service.url}/v1/resources/${counter.id}`, headers: { authorization: `Bearer ${counter.management_token}` } },
  };
  const chosen = targets[target];
  if (!chosen) throw new Error(`BENCH_TARGET must be one of ${Object.keys(targets).join(", ")}`);
  await autocannon({ ...chosen, connections, duration: 3 }); // warm-up

  const cdp = await inspector(inspectorPort);
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
  await cdp.send("Profiler.start");
  const result = await autocannon({ ...chosen, connections, duration: seconds });
  const { profile } = await cdp.send("Profiler.stop");
  cdp.close();

  const { total, functions, modules } = summarise(profile);
  console.log(`\n${target}: ${result.requests.average.toFixed(0)} req/s over ${seconds} s, ${connections} connections; ${(total / 1000).toFixed(0)} ms of samples in the isolate (idle included)\n`);
  console.log("| self | time | module |\n|---|---|---|\n" + modules.join("\n"));
  console.log("\n| self | time | function |\n|---|---|---|\n" + functions.join("\n"));
} finally {
  await service.stop();
}
