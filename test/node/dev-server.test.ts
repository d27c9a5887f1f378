/**
 * `npm run dev` starts and says what it started in one summary (migrations, engines, egress proxy,
 * runtime, URL, the next command), then wrangler's request log; it and the servers the tests start
 * (scripts/wrangler-dev.mjs) run the project's workerd, not the one bundled with wrangler (which dies
 * on "Too many open files" past about 80 MiB of streamed copy: bench/transfers.mjs copies 200 MiB).
 */
import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  applyMigrations,
  descendants,
  freePort,
  listeningPorts,
  PROJECT_WORKERD,
  PROJECT_WORKERD_VERSION,
  startWranglerDev,
  workerdsUnder,
} from "../../scripts/wrangler-dev.mjs";

let root: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), "zv-dev-test-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

it("the project's workerd is the newer one, not wrangler's bundled runtime", async () => {
  expect(PROJECT_WORKERD).toMatch(/\/workerd$/);
  expect(PROJECT_WORKERD).not.toContain("/wrangler/node_modules/");
  expect(PROJECT_WORKERD_VERSION.split(".")[1]! >= "20261023").toBe(true);
});

it("the migrations step says what it applied, and nothing the second time", async () => {
  const state = await mkdtemp(path.join(root, "d1-"));
  const first = await applyMigrations({ persistTo: state });
  expect(first.applied.length).toBe(first.total);
  expect(first.applied[0]).toBe("0001_init.sql");
  await expect(applyMigrations({ persistTo: state })).resolves.toEqual({ applied: [], total: first.total });
});

it("the servers the tests start run the project's workerd, with its own inspector and no proxy for it", async () => {
  const server = await startWranglerDev();
  try {
    const runtimes = await server.workerds();
    expect(runtimes.length).toBeGreaterThan(0);
    expect(new Set(runtimes)).toEqual(new Set([PROJECT_WORKERD]));
    // The runtime's own inspector lists the worker's isolate (the benches read its heap there).
    const inspector = await server.inspectorUrl();
    expect(inspector).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const targets = (await (await fetch(`${inspector}/json`)).json()) as { webSocketDebuggerUrl?: string }[];
    expect(targets.some((t) => t.webSocketDebuggerUrl?.includes("zeitvault"))).toBe(true);
    // wrangler's inspector proxy (which keeps every console event while no DevTools is attached) would listen in the
    // workerd in front, beside the service's address: that workerd listens on the service's address alone.
    const front = (await descendants(server.pid!)).find(
      (p) => /(^|\/)workerd$/.test(p.args[0] ?? "") && !p.args.join(" ").includes("entry=127.0.0.1:0 "),
    );
    const ports = await listeningPorts(front!.pid);
    expect(ports).toEqual([Number(new URL(server.url).port)]);
  } finally {
    await server.stop();
  }
}, 120_000);

it("a script ended by a signal takes its wrangler runs with it: no runtime outlives it", async () => {
  // A benchmark stopped with SIGTERM runs no `finally`; its runtimes used to stay, one spinning at half a core.
  const script =
    `import { startWranglerDev } from ${JSON.stringify(path.resolve("scripts/wrangler-dev.mjs"))};\n` +
    `const server = await startWranglerDev({ config: "bench/bare/wrangler.toml" });\n` +
    `console.log(JSON.stringify({ pid: server.pid, url: server.url }));\n` +
    `setInterval(() => {}, 1000);\n`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "pipe"] });
  const started = await new Promise<{ pid: number; url: string }>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += String(d);
      if (out.includes("\n")) resolve(JSON.parse(out.split("\n")[0]!) as { pid: number; url: string });
    });
    child.once("exit", (code) => reject(new Error(`the script ended first (${code})`)));
  });
  const runtimes = await descendants(started.pid);
  expect(runtimes.some((p) => /(^|\/)workerd$/.test(p.args[0] ?? ""))).toBe(true);
  expect((await fetch(`${started.url}/c/x`, { method: "POST" })).status).toBe(200);

  const ended = new Promise<NodeJS.Signals | null>((resolve) => child.once("exit", (_code, signal) => resolve(signal)));
  child.kill("SIGTERM");
  // The signal's own ending, as without the handler.
  expect(await ended).toBe("SIGTERM");
  // Running, not a zombie: a process killed after its parent is reparented to init, which need not reap it here.
  const running = async (pid: number) => {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
    return stat !== "" && stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  };
  for (const p of [{ pid: started.pid, args: ["wrangler"] }, ...runtimes])
    await expect.poll(() => running(p.pid), { message: p.args[0], timeout: 10_000 }).toBe(false);
  await expect(fetch(`${started.url}/c/x`, { method: "POST" })).rejects.toThrow();
}, 120_000);

it("`npm run dev` prints one summary, runs the project's workerd, logs requests after, stops on Ctrl-C", async () => {
  const port = await freePort();
  const state = await mkdtemp(path.join(root, "dev-"));
  const child = spawn(
    process.execPath,
    ["scripts/dev.mjs", "--port", String(port), "--ip", "127.0.0.1", "--persist-to", state],
    {
      env: { ...process.env, ENGINE_PORT: "0", TMPDIR: root, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  try {
    const deadline = Date.now() + 150_000;
    while (!out.includes("  next: ") && child.exitCode === null && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    const url = `http://127.0.0.1:${port}`;
    const lines = out.trimEnd().split("\n");
    expect(lines.length, out).toBeLessThanOrEqual(8);
    expect(out).toContain(`Zeitvault is ready at ${url}`);
    expect(out).toMatch(/ {2}D1 {10}\d+ migration\(s\) applied \(0001_init, .*\), local data in /);
    expect(out).toMatch(/ {2}engines {5}(found .*|none found) at http:\/\/127\.0\.0\.1:\d+/);
    expect(out).toMatch(/ {2}egress {6}(tinyproxy on 127\.0\.0\.1:\d+|not started, .*)/);
    expect(out).toContain(`  runtime     workerd ${PROJECT_WORKERD_VERSION}`);
    expect(out).toContain(`  next: \`ZEITVAULT_URL=${url} npm run -s buy -- 5\``);
    expect(out).not.toMatch(/┌|ENOTFOUND|Binding|wrangler 4\.|Scheduled Workers/);

    expect(new Set(await workerdsUnder(child.pid!))).toEqual(new Set([PROJECT_WORKERD]));
    expect((await fetch(`${url}/v1/prices`)).status).toBe(200);
    const logged = Date.now() + 10_000;
    while (!out.includes("GET /v1/prices 200") && Date.now() < logged) await new Promise((r) => setTimeout(r, 100));
    expect(out).toContain("GET /v1/prices 200");
  } finally {
    child.kill("SIGINT");
    await exited;
  }
  // The egress proxy's folder went with it.
  expect((await readdir(root)).filter((name) => name.startsWith("zv-egress-"))).toEqual([]);
}, 200_000);
