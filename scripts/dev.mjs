#!/usr/bin/env node
/**
 * `npm run dev`: the local D1 migrations, the local engines (scripts/engines.mjs: Debian's chromium
 * rendering PDFs, LibreOffice, tesseract; a missing one is reported with the command that installs
 * it) and the egress proxy (scripts/egress-proxy.mjs: tinyproxy), then `wrangler dev` with ENGINE_URL
 * and EGRESS_PROXY_URL pointing at them, run as the tests run it (scripts/wrangler-dev.mjs: the
 * project's workerd). Extra arguments go to wrangler dev (`--persist-to` to the migrations too).
 * Ctrl-C stops everything.
 *
 * What happens before wrangler is ready (its migration tables, bindings table, banners) is kept, not
 * printed: one summary says what started, and wrangler's request log follows. If wrangler stops before
 * it is ready, what it printed is shown. Nothing that is missing or will not start stops the server:
 * it is a line of the summary.
 */
import { execFileSync, spawn } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { stripVTControlCharacters } from "node:util";
import { startEgressProxy } from "./egress-proxy.mjs";
import { startEngines } from "./engines.mjs";
import { applyMigrations, PROJECT_WORKERD_VERSION, wranglerEnv } from "./wrangler-dev.mjs";

const WRANGLER = path.resolve("node_modules/.bin/wrangler");
const DEFAULT_URL = "http://localhost:8787";
const args = process.argv.slice(2);
const persistAt = args.indexOf("--persist-to");
const persistTo = persistAt >= 0 ? args[persistAt + 1] : undefined;

execFileSync(process.execPath, ["scripts/site-assets.mjs"], { stdio: "inherit" });
const migrations = await applyMigrations({ persistTo });

/** The engines on ENGINE_PORT (3901), or on a free port when another process holds that one. */
async function engines() {
  const port = Number(process.env.ENGINE_PORT ?? 3901);
  try {
    return await startEngines({ port });
  } catch (err) {
    if (err.code !== "EADDRINUSE") throw err;
    return startEngines({ port: 0 });
  }
}
const [local, proxy] = await Promise.all([engines(), startEgressProxy()]);
const egressVars = proxy.missing ? [] : ["--var", `EGRESS_PROXY_URL:${proxy.url}`, "--var", `EGRESS_IPS:${proxy.ips}`];

function summary(url) {
  const found = ["chromium", "libreoffice", "tesseract", "pdftoppm"].filter((name) => !local.missing.includes(name));
  const d1 = migrations.applied.length
    ? `${migrations.applied.length} migration(s) applied (` +
      `${migrations.applied.map((m) => m.replace(/\.sql$/, "")).join(", ")})`
    : `up to date (${migrations.total} migrations)`;
  const engineLine =
    `${found.length ? `found ${found.join(", ")}` : "none found"} at ${local.url}` +
    (local.missing.length
      ? `; missing ${local.missing.join(", ")} (their calls answer 503): ${local.installHint(local.missing)}`
      : "");
  const egress = proxy.missing
    ? `not started, egress-connectors answer 503: ${proxy.why}${proxy.installHint ? `: ${proxy.installHint}` : ""}`
    : `tinyproxy on 127.0.0.1:${proxy.port}`;
  const buy = url === DEFAULT_URL ? "npm run -s buy -- 5" : `ZEITVAULT_URL=${url} npm run -s buy -- 5`;
  return [
    "",
    `Zeitvault is ready at ${url}  (reference ${url}/docs, prices ${url}/v1/prices; Ctrl-C stops it)`,
    `  D1          ${d1}, local data in ${persistTo ?? ".wrangler/state"}`,
    `  engines     ${engineLine}`,
    `  egress      ${egress}`,
    `  runtime     workerd ${PROJECT_WORKERD_VERSION}, the project's (the tests run it too)`,
    `  next: \`${buy}\` buys $5 of credits and prints the token (README's walk-through with curl)`,
    "",
  ].join("\n");
}

// Said once in the summary, or noise: the cron hint (the scheduled handler is tested, not triggered here).
const NOISE = [/^⎔ Starting local server/, /^\[wrangler:info\] Ready on /];
const NOISY_BLOCK = /Scheduled Workers are not automatically triggered/;

const wrangler = spawn(WRANGLER, ["dev", "--var", `ENGINE_URL:${local.url}`, ...egressVars, ...args], {
  env: wranglerEnv(process.stdout.isTTY ? { FORCE_COLOR: "1" } : {}),
  stdio: ["inherit", "pipe", "pipe"],
});
let ready = false;
const before = [];
/**
 * A warning or error block (a `▲ [WARNING]` or `✘ [ERROR]` line and its indented lines) seen before ready: shown
 * unless it is noise.
 */
let block = null;
const flush = () => {
  if (block && !NOISY_BLOCK.test(block.join("\n"))) console.log(block.join("\n"));
  block = null;
};
function line(raw, out) {
  const text = stripVTControlCharacters(raw);
  if (!ready) {
    before.push(raw);
    const at = /Ready on (\S+)/.exec(text);
    if (at) {
      flush();
      ready = true;
      console.log(summary(at[1]));
      return;
    }
    if (/^[▲✘] \[(WARNING|ERROR)\]/.test(text)) {
      flush();
      block = [raw];
    } else if (block && (text === "" || /^\s/.test(text))) block.push(raw);
    else flush();
    return;
  }
  if (!NOISE.some((n) => n.test(text))) out.write(`${raw}\n`);
}
createInterface({ input: wrangler.stdout }).on("line", (l) => line(l, process.stdout));
createInterface({ input: wrangler.stderr }).on("line", (l) => line(l, process.stderr));

let stopping = false;
const stop = async (code) => {
  if (!ready && !stopping) console.error(`wrangler dev stopped before it was ready (${code}):\n${before.join("\n")}`);
  await Promise.all([local.stop(), proxy.missing ? undefined : proxy.stop()]);
  process.exit(code);
};
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    stopping = true;
    wrangler.kill(signal);
  });
}
wrangler.on("exit", (code, signal) => void stop(code ?? (signal ? 0 : 1)));
