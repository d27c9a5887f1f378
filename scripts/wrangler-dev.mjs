/**
 * Starts the real `wrangler dev` (local D1 with migrations applied, R2, Durable
 * Objects, Queues) on a free loopback port, for checks that need a running
 * server: the official x402 clients, the buy script, the benchmarks. With
 * `npm run dev` (scripts/dev.mjs) it shares one way to run wrangler: the
 * runtime, the environment and the migrations step below.
 *
 * The runtime is the project's workerd, the one the tests run in (@cloudflare/vitest-plugin's
 * miniflare), not the older one bundled with wrangler 4.86 (1.20260426), whose local runtime loops
 * opening sockets until "Too many open files" and dies once a streamed copy passes about 80 MiB.
 * wrangler takes another runtime through MINIFLARE_WORKERD_PATH (set by the caller, it wins).
 */
import { execFile, execFileSync, spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { mkdtemp, readFile, readdir, readlink, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const WRANGLER = path.resolve("node_modules/.bin/wrangler");
const testsWorkerd = createRequire(
  createRequire(import.meta.resolve("@cloudflare/vitest-plugin")).resolve("miniflare"),
)("workerd");
/** The workerd binary the tests run, and its version (`1.20261023.1`). */
export const PROJECT_WORKERD = testsWorkerd.default;
export const PROJECT_WORKERD_VERSION = testsWorkerd.version;

/**
 * The environment wrangler runs in, here and under `npm run dev`: the project's runtime; no metrics,
 * no banner and update check, no fetch of the `Request.cf` placeholder from workers.cloudflare.com
 * (offline it printed a stack trace; the built-in placeholder is used either way). Read when wrangler
 * starts, not at import, so a caller can set the environment first.
 */
export function wranglerEnv(extra = {}) {
  return {
    ...process.env,
    MINIFLARE_WORKERD_PATH: process.env.MINIFLARE_WORKERD_PATH || PROJECT_WORKERD,
    WRANGLER_SEND_METRICS: "false",
    WRANGLER_HIDE_BANNER: "true",
    CLOUDFLARE_CF_FETCH_ENABLED: process.env.CLOUDFLARE_CF_FETCH_ENABLED ?? "false",
    ...extra,
  };
}
const quiet = () => wranglerEnv({ NO_COLOR: "1", CI: "true" });
/**
 * No inspector proxy for the runs started here (tests, benches, the soak): nobody attaches DevTools to them. wrangler
 * 4.86's proxy (InspectorProxyWorker, in the workerd that fronts the service) keeps every inspector event of the
 * runtime while no DevTools is attached, one per console line, and posts each to wrangler as a debug log. Under the
 * soak that workerd grew by about 300 MB a minute and took three quarters of a core until the service behind it
 * starved (2026-11-28). wrangler reads one switch for it: the variable VS Code sets in a debug terminal (its
 * ProxyController's `inspectorEnabled`). The runtime keeps its own inspector: `inspectorUrl()` finds it.
 * `npm run dev` keeps the proxy, for a person's DevTools.
 */
const NO_INSPECTOR_PROXY = { VSCODE_INSPECTOR_OPTIONS: "{}" };

/**
 * Applies the local D1 migrations, its output kept rather than printed (a table per migration);
 * answers the names applied now and how many there are. A failure throws with that output.
 * @param {{ config?: string, persistTo?: string }} [options]
 * @returns {Promise<{ applied: string[], total: number }>}
 */
export async function applyMigrations({ config = "wrangler.toml", persistTo } = {}) {
  const args = [
    "d1",
    "migrations",
    "apply",
    "DB",
    "--local",
    "--config",
    config,
    ...(persistTo ? ["--persist-to", persistTo] : []),
  ];
  let stdout;
  try {
    ({ stdout } = await promisify(execFile)(WRANGLER, args, { env: quiet(), maxBuffer: 16 << 20 }));
  } catch (err) {
    throw new Error(`wrangler d1 migrations apply failed:\n${err.stdout ?? ""}${err.stderr ?? err.message}`);
  }
  // The first table lists what is to be applied; none when the database is up to date.
  const pending = stdout.includes("No migrations to apply")
    ? ""
    : stdout.slice(0, stdout.indexOf("About to apply") >>> 0);
  const applied = [...new Set(pending.match(/\d{4}_[\w-]+\.sql/g) ?? [])];
  const total = (await readdir(path.resolve(path.dirname(config), "migrations"))).filter((f) =>
    f.endsWith(".sql"),
  ).length;
  return { applied, total };
}

/** The workerd binaries running under process `pid` (wrangler's children): which runtime it started. */
export async function workerdsUnder(pid) {
  return (await descendants(pid)).filter((p) => /(^|\/)workerd$/.test(p.args[0] ?? "")).map((p) => p.args[0]);
}

/**
 * The processes below `pid`, with their command lines split on spaces.
 * @returns {Promise<{ pid: number, parent: number, args: string[] }[]>}
 */
export async function descendants(pid) {
  const { stdout } = await promisify(execFile)("ps", ["-eo", "pid=,ppid=,args="], { maxBuffer: 16 << 20 }).catch(
    () => ({ stdout: "" }),
  );
  return below(pid, stdout);
}

/** `descendants`, for an exit handler, which cannot wait. */
function descendantsNow(pid) {
  try {
    return below(pid, execFileSync("ps", ["-eo", "pid=,ppid=,args="], { maxBuffer: 16 << 20, encoding: "utf8" }));
  } catch {
    return [];
  }
}

/**
 * The processes below `pid` in `ps -eo pid=,ppid=,args=`'s output.
 * @returns {{ pid: number, parent: number, args: string[] }[]}
 */
function below(pid, stdout) {
  const all = stdout
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .map(([child, parent, ...args]) => ({ pid: Number(child), parent: Number(parent), args }));
  const found = new Map([[pid, null]]);
  // Until no generation is added (a child's pid may be lower than its parent's).
  for (let size = 0; size !== found.size;) {
    size = found.size;
    for (const p of all) if (found.has(p.parent) && !found.has(p.pid)) found.set(p.pid, p);
  }
  return [...found.values()].filter(Boolean);
}

/**
 * The wrangler runs this process started and has not stopped. Ended by a signal, node runs no `finally`: wrangler's
 * runtimes outlived a benchmark stopped with SIGTERM and, their proxy gone, one spun on reconnecting at half a core
 * for an hour and a half (bench/README.md, "2026-11-28 (07:40)"). So each run's whole tree is killed on the way out.
 */
const unstopped = new Map(); // wrangler's pid → what its stop() would have removed (the config copy, its own state)
function killUnstopped() {
  for (const [pid, leftovers] of unstopped) {
    sigkill([{ pid }, ...descendantsNow(pid)]);
    for (const file of leftovers) rmSync(file, { recursive: true, force: true });
  }
  unstopped.clear();
}
/** SIGKILL to each of `processes`, those already gone skipped. */
function sigkill(processes) {
  for (const p of processes) {
    try {
      process.kill(p.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}
let endsUnstopped = false;
function endUnstoppedOnExit() {
  if (endsUnstopped) return;
  endsUnstopped = true;
  process.on("exit", killUnstopped);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"])
    process.once(signal, () => {
      killUnstopped();
      // Nobody else listening: the signal's own ending, as without this handler.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    });
}

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
 * A copy of `config` beside the original (so its relative paths still hold), deleted on stop: with every
 * [[ratelimits]] limit (and the RATE_LIMIT vars that repeat them) set to `perMinute` when given (a rate limit
 * binding has no command-line override; load generators from one address need this), and with `vars` written
 * into its top-level [vars] (a front worker's wrangler dev passes `--var` to the first config's worker only), and
 * every queue consumer's `max_batch_size` set to `batchSize` when given.
 * @param {string} config
 * @param {{ perMinute?: number, vars?: Record<string, string>, batchSize?: number }} changes
 * @returns {Promise<{ config: string, vars: Record<string, string> }>} the copy, and the vars still to pass as `--var`
 */
async function configCopy(config, { perMinute, vars, batchSize }) {
  let text = await readFile(config, "utf8");
  const raisedVars = {};
  if (batchSize) text = text.replace(/^(max_batch_size\s*=\s*)\d+/gm, `$1${batchSize}`);
  if (perMinute) {
    const before = text;
    text = text.replace(/(simple\s*=\s*\{\s*limit\s*=\s*)\d+/g, `$1${perMinute}`);
    if (text === before) throw new Error(`${config} has no [[ratelimits]] limit to raise`);
    for (const name of ["RATE_LIMIT_PER_MINUTE", "IP_RATE_LIMIT_PER_MINUTE", "ADDRESS_RATE_LIMIT_PER_MINUTE"])
      raisedVars[name] = String(perMinute);
  }
  const all = { ...raisedVars, ...vars };
  if (vars) text = withVars(text, all);
  const copy = path.join(path.dirname(config), `.wrangler-dev-${process.pid}-${Date.now()}.toml`);
  await writeFile(
    copy,
    `# Temporary copy of ${path.basename(config)} (scripts/wrangler-dev.mjs: ` +
      [perMinute && "raised rate limits", vars && "vars", batchSize && "queue batches"].filter(Boolean).join(", ") +
      `); deleted on stop.\n${text}`,
  );
  return { config: copy, vars: vars ? {} : all };
}

/** `toml` with `vars` set in its top-level [vars] table: a line there replaced, or one added after its header. */
function withVars(toml, vars) {
  const lines = toml.split("\n");
  const start = lines.findIndex((l) => l.trim() === "[vars]");
  if (start < 0) throw new Error("the config has no [vars] table");
  let end = lines.findIndex((l, i) => i > start && /^\s*\[/.test(l));
  if (end < 0) end = lines.length;
  const left = new Map(Object.entries(vars));
  for (let i = start + 1; i < end; i++) {
    const key = /^\s*([A-Za-z0-9_]+)\s*=/.exec(lines[i])?.[1];
    if (key && left.has(key)) {
      lines[i] = `${key} = ${JSON.stringify(left.get(key))}`;
      left.delete(key);
    }
  }
  lines.splice(start + 1, 0, ...[...left].map(([k, v]) => `${k} = ${JSON.stringify(v)}`));
  return lines.join("\n");
}

/**
 * @typedef {{ url: string, state: string, pid: number | undefined, stop(): Promise<void>, kill(): Promise<void>,
 *   output(): string, runtimeUrl(): Promise<string | null>, inspectorUrl(): Promise<string | null>,
 *   workerds(): Promise<string[]> }} WranglerDev
 */

/**
 * @param {{ vars?: Record<string, string>, config?: string, rateLimitPerMinute?: number, queueBatchSize?: number,
 *   state?: string, port?: number, onOutput?: (chunk: string) => void, frontConfig?: string }} [options]
 *   - `queueBatchSize`: every queue consumer's batch (the local broker runs one batch at a time: bench/soak.mjs).
 *   - `state` and `port`: start again on the state (and at the address) of one that was killed (bench/soak.mjs);
 *     a given state is the caller's, left in place by stop().
 *   - `onOutput`: every chunk wrangler prints (a long run's whole log).
 *   - `frontConfig`: a second worker's config, served in front of the service in the same wrangler dev (wrangler
 *     serves the first config's worker; bench/soak-faults/ forwards to the service through a service binding).
 * @returns {Promise<WranglerDev>}
 */
export async function startWranglerDev(options = {}) {
  const state = options.state ?? (await mkdtemp(path.join(tmpdir(), "zeitvault-dev-")));
  const ownState = !options.state;
  // Behind a front worker the service's vars go into its config (see configCopy).
  const raised =
    options.rateLimitPerMinute || options.frontConfig || options.queueBatchSize
      ? await configCopy(options.config ?? "wrangler.toml", {
          perMinute: options.rateLimitPerMinute,
          batchSize: options.queueBatchSize,
          vars: options.frontConfig ? (options.vars ?? {}) : undefined,
        })
      : null;
  const config = raised?.config ?? options.config ?? "wrangler.toml";
  const removeCopy = () => (raised ? rm(raised.config, { force: true }) : Promise.resolve());
  try {
    await applyMigrations({ config, persistTo: state });
  } catch (err) {
    await removeCopy();
    throw err;
  }
  const port = options.port ?? (await freePort());
  const passed = raised && options.frontConfig ? raised.vars : { ...raised?.vars, ...options.vars };
  const vars = Object.entries(passed).flatMap(([k, v]) => ["--var", `${k}:${v}`]);
  const child = spawn(
    WRANGLER,
    [
      "dev",
      // Extra configs come first: wrangler serves the first one's worker (bench/soak-faults/ fronts the service).
      ...(options.frontConfig ? ["--config", options.frontConfig] : []),
      "--config",
      config,
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--persist-to",
      state,
      ...vars,
    ],
    {
      env: { ...quiet(), ...NO_INSPECTOR_PROXY },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  unstopped.set(child.pid, [raised?.config, ownState ? state : undefined].filter(Boolean));
  endUnstoppedOnExit();
  // The last 64 KiB of its output, for a failure's message (a long run can log a lot).
  let output = "";
  const keep = (d) => {
    output = (output + d).slice(-65536);
    options.onOutput?.(String(d));
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    unstopped.delete(child.pid);
    if (child.exitCode === null) {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
    }
    if (ownState) await rm(state, { recursive: true, force: true });
    await removeCopy();
  };
  /**
   * A crash: wrangler and every workerd under it get SIGKILL at once, nothing flushed; the state stays for a restart.
   */
  const kill = async () => {
    unstopped.delete(child.pid);
    sigkill([{ pid: child.pid }, ...(await descendants(child.pid))]);
    if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once("exit", r));
    await removeCopy();
  };
  // Three minutes: on a 2-core machine shared with other suites, its first answer has taken over one.
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    const ok = await fetch(`${url}/v1/prices`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok)
      return {
        url,
        state,
        pid: child.pid,
        stop,
        kill,
        output: () => output,
        runtimeUrl: () => runtimeUrl(child.pid),
        inspectorUrl: () => inspectorUrl(child.pid),
        workerds: () => workerdsUnder(child.pid),
      };
    await new Promise((r) => setTimeout(r, 250));
  }
  await stop();
  throw new Error(`wrangler dev did not start:\n${output.slice(-4000)}`);
}

/**
 * What process `pid` holds open: the targets of its descriptors (files, `socket:[inode]`), from /proc (Linux).
 * @param {number} pid
 * @returns {Promise<string[]>}
 */
export async function openFiles(pid) {
  const fds = await readdir(`/proc/${pid}/fd`).catch(() => []);
  const links = await Promise.all(fds.map((fd) => readlink(`/proc/${pid}/fd/${fd}`).catch(() => "")));
  return links.filter(Boolean);
}

/**
 * The TCP ports process `pid` listens on, from /proc (Linux): its sockets' inodes among the listeners of
 * /proc/net/tcp and tcp6. Empty when /proc cannot tell.
 * @param {number} pid
 * @returns {Promise<number[]>}
 */
export async function listeningPorts(pid) {
  const inodes = new Set((await openFiles(pid)).map((l) => /^socket:\[(\d+)\]$/.exec(l)?.[1]).filter(Boolean));
  const ports = [];
  for (const table of ["tcp", "tcp6"]) {
    const text = await readFile(`/proc/${pid}/net/${table}`, "utf8").catch(() => "");
    // sl, local_address (hex address:hex port), rem_address, st (0A: listening), …, inode (the tenth column)
    const rows = text
      .split("\n")
      .slice(1)
      .map((l) => l.trim().split(/\s+/));
    for (const cols of rows)
      if (cols[3] === "0A" && inodes.has(cols[9])) ports.push(parseInt(cols[1].split(":")[1], 16));
  }
  return ports;
}

/**
 * The addresses the runtime that runs the worker itself listens on (wrangler's child workerd started with
 * `entry=127.0.0.1:0`, behind wrangler's dev proxy: a second workerd that forwards every request, a hop production
 * does not have), each with what answers there: its entry, its V8 inspector (`/json/version` says workerd), its debug
 * port (no HTTP).
 * @param {number | undefined} wranglerPid
 * @returns {Promise<{ url: string, inspector: boolean, http: boolean }[]>}
 */
async function runtimeListeners(wranglerPid) {
  const found = [];
  for (const { pid, args } of await descendants(wranglerPid)) {
    if (!args[0]?.endsWith("/workerd") || !args.join(" ").includes("entry=127.0.0.1:0 ")) continue;
    for (const port of await listeningPorts(pid)) {
      const url = `http://127.0.0.1:${port}`;
      const answer = await fetch(`${url}/json/version`).then(
        async (r) => ({ status: r.status, body: await r.text() }),
        () => null,
      );
      found.push({ url, inspector: answer?.status === 200 && answer.body.includes("workerd"), http: !!answer });
    }
  }
  return found;
}

/**
 * The runtime's own address (BENCH_DIRECT=1 loads it without the proxy's hop), or `null`.
 * @param {number | undefined} wranglerPid
 */
async function runtimeUrl(wranglerPid) {
  return (await runtimeListeners(wranglerPid)).find((l) => l.http && !l.inspector)?.url ?? null;
}

/**
 * The runtime's V8 inspector (the isolate of the worker and its Durable Objects; bench/lib.mjs's `inspector`), or
 * `null`. A restarted runtime listens elsewhere: ask again after a restart.
 * @param {number | undefined} wranglerPid
 */
async function inspectorUrl(wranglerPid) {
  return (await runtimeListeners(wranglerPid)).find((l) => l.inspector)?.url ?? null;
}
