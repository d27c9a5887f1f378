/**
 * Helpers shared by the benchmark scripts: bounded concurrency, percentiles, buying credits
 * from a local service, a frozen copy of the source for `wrangler dev`, a note of what else
 * is loading this (shared) machine, and a client for the isolate's V8 inspector.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdtemp, readFile, symlink } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import WebSocket from "ws";

export const run = promisify(execFile);
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const log = (...args) => console.error(`[${new Date().toISOString().slice(11, 19)}]`, ...args);

/** Runs fn(0..n-1) with at most `limit` calls in flight. */
export async function pool(n, limit, fn) {
  let next = 0;
  const worker = async () => {
    while (next < n) await fn(next++);
  };
  await Promise.all(Array.from({ length: Math.min(limit, n) }, worker));
}

/** Nearest-rank percentiles of a list of numbers. */
export function percentiles(values) {
  const sorted = Float64Array.from(values).sort();
  const at = (q) =>
    sorted.length ? sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] : NaN;
  return {
    n: sorted.length,
    min: sorted[0] ?? NaN,
    p50: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
    max: sorted.length ? sorted[sorted.length - 1] : NaN,
  };
}

/**
 * `runs` against `baseline`, round by round (each round loads its targets back to back, so a round's
 * ratio cancels the drift of the shared machine), as the median of those ratios and each round's, for
 * the record: throughput in percent of the baseline's, or (metric "p99") latency as a multiple of it.
 * @param {"rps" | "p99"} [metric]
 */
export function roundRatios(runs, baseline, metric = "rps") {
  const each = runs.map((r, i) => r[metric] / baseline[i][metric]).sort((a, b) => a - b);
  const median = each[Math.floor(each.length / 2)];
  const show =
    metric === "rps" ? (x, digits) => `${(x * 100).toFixed(digits)}%` : (x, digits) => `${x.toFixed(digits + 1)}×`;
  return { median, text: `${show(median, 1)} (rounds: ${each.map((x) => show(x, 0)).join(", ")})` };
}

/** POSTs `body` as JSON and answers the parsed answer; anything but a 2xx throws with the answer's text. */
export async function postJson(url, body, headers = {}) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** Buys `dollars` of credits from the service at `url` with scripts/buy.mjs; returns the credit token. */
export async function buyCredits(url, dollars) {
  const { stdout } = await run("node", ["scripts/buy.mjs", String(dollars)], {
    env: { ...process.env, ZEITVAULT_URL: url },
  });
  return stdout.trim();
}

/**
 * A copy of the source (sharing node_modules) that nobody edits while a benchmark runs: `wrangler dev`
 * reloads the worker whenever a watched file changes. `source`: "worktree" (as it is, untracked files
 * included) or "head" (the last commit).
 */
export async function snapshotSource(source = "worktree") {
  const dir = await mkdtemp(path.join(tmpdir(), "zeitvault-bench-src-"));
  if (source === "head") {
    await run("sh", ["-c", `git archive HEAD | tar -x -C '${dir}'`]);
  } else {
    const { stdout } = await run("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
      maxBuffer: 64 << 20,
    });
    for (const file of stdout.split("\0").filter((f) => f && existsSync(f))) await cp(file, path.join(dir, file));
  }
  await symlink(path.resolve("node_modules"), path.join(dir, "node_modules"), "dir");
  // The static assets wrangler serves (public/, ignored by git) are generated, as `npm test` and `npm run dev` do.
  await run("node", [path.resolve("scripts/site-assets.mjs")], { cwd: dir });
  return dir;
}

/** CPU ticks (user + system) a process has used, or null once it is gone. */
async function cpuTicks(pid) {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

/**
 * Other wrangler, workerd and vitest processes (not this script's own children) and how busy they
 * are now: CPU used over `seconds`, in cores (1.0 = one core fully busy). Linux only.
 */
export async function otherActivity(seconds = 3) {
  const { stdout } = await run("ps", ["-eo", "pid=,ppid=,args="], { maxBuffer: 16 << 20 });
  const all = stdout
    .split("\n")
    .map((l) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(l))
    .filter(Boolean)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3] }));
  const parent = new Map(all.map((p) => [p.pid, p.ppid]));
  const ours = (pid) => {
    for (let at = pid, hops = 0; at > 1 && hops < 64; at = parent.get(at) ?? 0, hops++)
      if (at === process.pid) return true;
    return false;
  };
  const procs = all.filter((p) => /wrangler|workerd|vitest/.test(p.args) && !ours(p.pid));
  const before = await Promise.all(procs.map((p) => cpuTicks(p.pid)));
  await sleep(seconds * 1000);
  const after = await Promise.all(procs.map((p) => cpuTicks(p.pid)));
  const ticksPerSecond = 100; // USER_HZ on Linux
  const cores =
    procs.reduce((sum, _p, i) => sum + (before[i] !== null && after[i] !== null ? after[i] - before[i] : 0), 0) /
    ticksPerSecond /
    seconds;
  const count = (re) => procs.filter((p) => re.test(p.args)).length;
  const workerd = count(/bin\/workerd /);
  const vitest = count(/vitest/);
  return {
    workerd,
    vitest,
    cores,
    text: `${workerd} workerd and ${vitest} vitest processes of others, using ${cores.toFixed(2)} cores`,
  };
}

/** Samples the 1-minute load average every 5 s until stopped. */
export function loadSampler() {
  const samples = [loadavg()[0]];
  const timer = setInterval(() => samples.push(loadavg()[0]), 5000);
  timer.unref();
  return { samples, stop: () => clearInterval(timer) };
}

/**
 * A minimal Chrome DevTools Protocol client over the inspector's WebSocket (a started service's `inspectorUrl()`):
 * the isolate that runs the worker and its Durable Objects.
 * @param {string | null} base
 */
export async function inspector(base) {
  if (!base) throw new Error("the runtime's inspector was not found");
  const targets = await (await fetch(`${base}/json`)).json();
  const url = targets.find((t) => t.webSocketDebuggerUrl)?.webSocketDebuggerUrl;
  if (!url) throw new Error(`no inspector target at ${base}: ${JSON.stringify(targets)}`);
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
  let id = 0;
  const waiting = new Map();
  const client = {};
  ws.on("message", (data) => {
    const msg = JSON.parse(String(data));
    if (msg.method === "Debugger.scriptParsed") client.onScript?.(msg.params);
    if (msg.id && waiting.has(msg.id)) {
      waiting.get(msg.id)(msg);
      waiting.delete(msg.id);
    }
  });
  // A runtime killed under the socket: what waits is refused, and so is what is sent after, so a caller that keeps the
  // client (bench/soak.mjs) learns it must connect again instead of waiting forever.
  const lost = (why) => {
    client.closed = true;
    for (const done of waiting.values()) done({ error: { message: `inspector connection lost (${why})` } });
    waiting.clear();
  };
  ws.on("close", () => lost("closed"));
  ws.on("error", (err) => lost(err.message));
  const send = (method, params = {}) =>
    new Promise((resolve, reject) => {
      if (client.closed) return reject(new Error(`${method}: inspector connection lost`));
      const n = ++id;
      waiting.set(n, (msg) => (msg.error ? reject(new Error(`${method}: ${msg.error.message}`)) : resolve(msg.result)));
      ws.send(JSON.stringify({ id: n, method, params }));
    });
  return Object.assign(client, { send, close: () => ws.close() });
}

/**
 * Maps a line of a wrangler (esbuild) bundle to the source it came from: esbuild writes a `// path` comment
 * line before each module's code, so the nearest one above a line names its file. A package's files are
 * named by the package (`viem`, `@noble/curves`), wherever node_modules resolved to (a symlinked
 * node_modules gives `../main/node_modules/…`). `lineOf` gives a line's first characters, to name an
 * anonymous function.
 * @param {string} source the bundle's text
 */
export function bundleSourceMap(source) {
  const lines = source.split("\n");
  const starts = [];
  lines.forEach((line, i) => {
    const m = /^\/\/ (\S+\.(?:[cm]?[jt]sx?|json))$/.exec(line);
    if (!m) return;
    const file = m[1];
    const at = file.lastIndexOf("node_modules/");
    const pkg = at === -1 ? null : /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file.slice(at));
    starts.push([i, pkg ? pkg[1] : file.replace(/^(\.\.\/)+/, "")]);
  });
  const fileOf = (line) => {
    let lo = 0,
      hi = starts.length - 1,
      found = "(bundle)";
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid][0] <= line) ((found = starts[mid][1]), (lo = mid + 1));
      else hi = mid - 1;
    }
    return found;
  };
  return { fileOf, lineOf: (line) => (lines[line] ?? "").trim().slice(0, 70) };
}
