/**
 * Starts the real `wrangler dev` (local D1 with migrations applied, R2, Durable
 * Objects, Queues) on a free loopback port, for checks that need a running
 * server: the official x402 clients, the buy script, the benchmarks.
 */
import { execFile, spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const WRANGLER = path.resolve("node_modules/.bin/wrangler");
/** Read when wrangler starts, not at import, so a caller can set the environment first (bench/transfers.mjs). */
const quiet = () => ({ ...process.env, WRANGLER_SEND_METRICS: "false", NO_COLOR: "1", CI: "true" });

/** @returns {Promise<number>} a loopback port that was free a moment ago */
export async function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error("no port"))));
    });
  });
}

/**
 * A copy of `config` with every [[ratelimits]] limit (and the RATE_LIMIT vars that repeat them)
 * set to `perMinute`, beside the original so its relative paths still hold. A rate limit binding
 * has no command-line override; load generators from one address need this.
 * @returns {Promise<{ config: string, vars: Record<string, string> }>}
 */
async function withRateLimits(config, perMinute) {
  const source = await readFile(config, "utf8");
  const raised = source.replace(/(simple\s*=\s*\{\s*limit\s*=\s*)\d+/g, `$1${perMinute}`);
  if (raised === source) throw new Error(`${config} has no [[ratelimits]] limit to raise`);
  const copy = path.join(path.dirname(config), `.wrangler-dev-${process.pid}-${Date.now()}.toml`);
  await writeFile(copy, `# Temporary copy of ${path.basename(config)} with raised rate limits (scripts/wrangler-dev.mjs); deleted on stop.\n${raised}`);
  return { config: copy, vars: { RATE_LIMIT_PER_MINUTE: String(perMinute), IP_RATE_LIMIT_PER_MINUTE: String(perMinute), ADDRESS_RATE_LIMIT_PER_MINUTE: String(perMinute) } };
}

/**
 * @param {{ vars?: Record<string, string>, config?: string, rateLimitPerMinute?: number, inspectorPort?: number }} [options]
 *   `inspectorPort`: where the isolate's V8 inspector listens (bench/profile.mjs takes a CPU profile there).
 * @returns {Promise<{ url: string, state: string, stop(): Promise<void>, output(): string, runtimeUrl(): Promise<string | null> }>}
 */
export async function startWranglerDev(options = {}) {
  const state = await mkdtemp(path.join(tmpdir(), "zeitvault-dev-"));
  const raised = options.rateLimitPerMinute ? await withRateLimits(options.config ?? "wrangler.toml", options.rateLimitPerMinute) : null;
  const config = raised?.config ?? options.config ?? "wrangler.toml";
  const removeCopy = () => (raised ? rm(raised.config, { force: true }) : Promise.resolve());
  try {
    await promisify(execFile)(WRANGLER, ["d1", "migrations", "apply", "DB", "--local", "--persist-to", state, "--config", config], { env: quiet() });
  } catch (err) {
    await removeCopy();
    throw err;
  }
  const port = await freePort();
  const vars = Object.entries({ ...raised?.vars, ...options.vars }).flatMap(([k, v]) => ["--var", `${k}:${v}`]);
  const child = spawn(WRANGLER, ["dev", "--config", config, "--ip", "127.0.0.1", "--port", String(port), "--persist-to", state, ...vars, ...(options.inspectorPort ? ["--inspector-port", String(options.inspectorPort)] : [])], {
    env: quiet(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  // The last 64 KiB of its output, for a failure's message (a long run can log a lot).
  let output = "";
  const keep = (d) => (output = (output + d).slice(-65536));
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null) {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
    }
    await rm(state, { recursive: true, force: true });
    await removeCopy();
  };
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    const ok = await fetch(`${url}/v1/prices`).then((r) => r.ok, () => false);
    if (ok) return { url, state, stop, output: () => output, runtimeUrl: () => runtimeUrl(child.pid) };
    await new Promise((r) => setTimeout(r, 250));
  }
  await stop();
  throw new Error(`wrangler dev did not start:\n${output.slice(-4000)}`);
}

/**
 * The address of the runtime that runs the worker itself, behind wrangler's dev proxy (a second
 * workerd process that forwards every request: a hop that production does not have). Found as the
 * listening socket of wrangler's child workerd started with `entry=127.0.0.1:0` that answers HTTP
 * with something other than its debug port's 501. `null` when it cannot be found (no `ss`).
 * @param {number | undefined} wranglerPid
 * @returns {Promise<string | null>}
 */
async function runtimeUrl(wranglerPid) {
  const sh = (cmd, args) => promisify(execFile)(cmd, args).then((r) => r.stdout, () => "");
  const descendants = new Set([wranglerPid]);
  for (const line of (await sh("ps", ["-eo", "pid=,ppid=,args="])).split("\n")) {
    const [pid, ppid, ...args] = line.trim().split(/\s+/);
    if (descendants.has(Number(ppid))) descendants.add(Number(pid));
    if (descendants.has(Number(pid)) && args[0]?.endsWith("/workerd") && args.join(" ").includes("entry=127.0.0.1:0 ")) {
      for (const m of (await sh("ss", ["-Hltnp"])).matchAll(new RegExp(`127\\.0\\.0\\.1:(\\d+)\\s.*pid=${pid},`, "g"))) {
        const url = `http://127.0.0.1:${m[1]}`;
        const status = await fetch(`${url}/`, { method: "HEAD" }).then((r) => r.status, () => 0);
        if (status && status !== 501) return url;
      }
    }
  }
  return null;
}
