#!/usr/bin/env node
/**
 * `npm run dev`: the local D1 migrations, the local engines (scripts/engines.mjs: Debian's chromium
 * rendering PDFs; a missing one is reported with the command that installs it), then `wrangler dev`
 * with ENGINE_URL pointing at them. Extra arguments go to wrangler dev. Ctrl-C stops both.
 */
import { execFileSync, spawn } from "node:child_process";
import path from "node:path";
import { startEngines } from "./engines.mjs";

const WRANGLER = path.resolve("node_modules/.bin/wrangler");

execFileSync(process.execPath, ["scripts/site-assets.mjs"], { stdio: "inherit" });
execFileSync(WRANGLER, ["d1", "migrations", "apply", "DB", "--local"], { stdio: "inherit" });

const engines = await startEngines({ port: Number(process.env.ENGINE_PORT ?? 3901) });
console.log(`Local engines on ${engines.url}.`);
if (engines.missing.length) {
  console.warn(`Missing engines: ${engines.missing.join(", ")}. PDF renders answer 503 until they are installed: ${engines.installHint(engines.missing)}`);
}

const wrangler = spawn(WRANGLER, ["dev", "--var", `ENGINE_URL:${engines.url}`, ...process.argv.slice(2)], { stdio: "inherit" });
const stop = async (code) => {
  await engines.stop();
  process.exit(code);
};
process.on("SIGINT", () => wrangler.kill("SIGINT"));
process.on("SIGTERM", () => wrangler.kill("SIGTERM"));
wrangler.on("exit", (code) => void stop(code ?? 0));
