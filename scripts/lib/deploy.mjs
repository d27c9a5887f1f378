/**
 * The one way the service is deployed, used by `npm run deploy` and by the last step of `npm run setup`:
 * copy the site assets, read the environment's vars from wrangler.toml and its secret names from
 * Cloudflare, apply the pending D1 migrations, and deploy only a config that config-check.ts finds
 * nothing wrong with. An unsafe config
 * (payments to nowhere, testnet money in production, a missing key) is refused before wrangler runs.
 * Setup hands over the secrets it made: they go up with the code in the same deploy (wrangler's
 * --secrets-file, a file only the owner can read, removed as soon as wrangler exits), so a new Worker
 * never runs without its keys and an interrupted setup leaves nothing half made.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { formatProblems, loadConfigCheck } from "./config-check.mjs";
import { secretNames, wrangler } from "./wrangler.mjs";
import { applyMigrations } from "./migrations.mjs";
import { readEnvironment } from "./wrangler-toml.mjs";

const SITE_ASSETS = fileURLToPath(new URL("../site-assets.mjs", import.meta.url));

/**
 * Why this environment may not be deployed, as lines to print; empty when it may. `secrets`: values about to go up with
 * it.
 */
export async function deployRefusals({ env, configPath, secrets = {} }) {
  if (!env) {
    return [
      "The top level of wrangler.toml is the local development config (settlement none would accept " +
        "payments that move no money): it is never deployed.",
      "Deploy an environment instead: npm run deploy -- --env production (or --env staging).",
    ];
  }
  const { configProblems, isDevelopmentSetting } = await loadConfigCheck();
  const { section } = await readEnvironment(configPath, env);
  const vars = section.vars ?? {};
  if (isDevelopmentSetting(vars.ENVIRONMENT))
    return [
      `[env.${env}] has ENVIRONMENT = "${vars.ENVIRONMENT}": a development config is never deployed. Set ` +
        `it to production or staging.`,
    ];
  const out = [];
  for (const db of section.d1_databases ?? []) {
    if (!db.database_id)
      out.push(
        `  ✘ D1 ${db.binding} (${db.database_name}) has no database_id.\n      Fix: npm run setup -- --env ` +
          `${env} (it creates the database and writes its id).`,
      );
  }
  const names = (await secretNames(["--env", env, "--config", configPath])) ?? new Set();
  const problems = configProblems({ ...vars, ...secrets }, new Set([...names].filter((name) => !(name in secrets))));
  if (problems.length) out.push(formatProblems(problems));
  return out.length ? [`[env.${env}] in ${configPath} is not safe to deploy:`, ...out] : [];
}

/**
 * Deploys the environment when it is safe, after the D1 migrations the code needs (`migrate`: false when the
 * caller applied them already); returns false (having printed why) when it is refused or wrangler fails.
 */
export async function deployEnvironment({ env, configPath, secrets = {}, migrate = true }) {
  const refusals = await deployRefusals({ env, configPath, secrets });
  if (refusals.length) {
    console.error(refusals.join("\n"));
    return false;
  }
  if (migrate) await applyMigrations(["--env", env, "--config", configPath]);
  await promisify(execFile)(process.execPath, [SITE_ASSETS]);
  console.log(`Deploying [env.${env}] …`);
  const args = ["deploy", "--env", env, "--config", configPath];
  if (!Object.keys(secrets).length) return (await wrangler(args, { show: true })).code === 0;
  const dir = await mkdtemp(path.join(tmpdir(), "zeitvault-deploy-"));
  try {
    const file = path.join(dir, "secrets.json");
    await writeFile(file, JSON.stringify(secrets), { mode: 0o600 });
    return (await wrangler([...args, "--secrets-file", file], { show: true })).code === 0;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
