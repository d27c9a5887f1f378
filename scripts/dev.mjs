#!/usr/bin/env node
/**
 * `npm run dev`: the local D1 migrations, the local engines (scripts/engines.mjs: Debian's chromium
 * rendering PDFs; a missing one is reported with the command that installs it) and the egress proxy
 * (scripts/egress-proxy.mjs: tinyproxy), then `wrangler dev` with ENGINE_URL and EGRESS_PROXY_URL pointing at them. Extra arguments go to wrangler dev. Ctrl-C stops both.
 */
import { execFileSync, spawn } from "node:child_process";
import path from "node:path";
import { startEgressProxy } from "./egress-proxy.mjs";
import { startEngines } from "./engines.mjs";

const WRANGLER = path.resolve("node_modules/.bin/wrangler");

execFileSync(process.execPath, ["scripts/site-assets.mjs"], { stdio: "inherit" });
execFileSync(WRANGLER, ["d1", "migrations", "apply", "DB", "--local"], { stdio: "inherit" });

const engines = await startEngines({ port: Number(process.env.ENGINE_PORT ?? 3901) });
console.log(`Local engines on ${engines.url}.`);
if (engines.missing.length) {
  console.warn(`Missing engines: ${engines.missing.join(", ")}. PDF renders answer 503 until they are installed: ${engines.installHint(engines.missing)}`);
}

const proxy = await startEgressProxy();
const egressVars = proxy.missing ? [] : ["--var", `EGRESS_PROXY_URL:${proxy.url}`, "--var", `EGRESS_IPS:${proxy.ips}`];
if (proxy.missing) console.warn(`Missing egress proxy (tinyproxy): egress-connectors answer 503 until it is installed: ${proxy.installHint}`);
else console.log(`Egress proxy (tinyproxy) on ${new URL(proxy.url).host}.`);

const wrangler = spawn(WRANGLER, ["dev", "--var", `ENGINE_URL:${engines.url}`, ...egressVars, ...process.argv.slice(2)], { stdio: "inherit" });
const stop = async (code) => {
  await Promise.all([engines.stop(), proxy.missing ? undefined : proxy.stop()]);
  process.exit(code);
};
process.on("SIGINT", () => wrangler.kill("SIGINT"));
process.on("SIGTERM", () => wrangler.kill("SIGTERM"));
wrangler.on("exit", (code) => void stop(code ?? 0));
