#!/usr/bin/env node
/**
 * `npm run setup [-- --env production|staging] [--dry-run] [--config wrangler.toml] [operator flags]`:
 * from a logged-in wrangler and a fresh account to a deployed service, in one command that can be run
 * again at any time. It settles the operator's values (scripts/setup/operator-values.mjs) and checks
 * them with the Worker's own config-check.ts before it reads anything; reads what exists (resources,
 * secret names, applied migrations); checks again with the secrets it would add, and refuses an unsafe
 * result before anything is made. Then it creates only the missing resources, writes database_id and
 * the values into the environment's section of wrangler.toml, applies pending migrations, and deploys
 * through `npm run deploy`'s path, with the missing secrets, when anything changed.
 * --dry-run prints that plan and changes nothing.
 */
import { writeFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { formatProblems, loadConfigCheck } from "./lib/config-check.mjs";
import { deployEnvironment } from "./lib/deploy.mjs";
import { secretNames } from "./lib/wrangler.mjs";
import { readEnvironment, setDatabaseId, setVar } from "./lib/wrangler-toml.mjs";
import { OPERATOR_FLAGS, settleOperatorValues, settleRelayerKey } from "./setup/operator-values.mjs";
import { createResources, findResources } from "./setup/resources.mjs";
import { applyMigrations } from "./lib/migrations.mjs";
import { describeSecret, GENERATED_SECRETS, makeSecrets, secretsToUpload, showAdminToken } from "./setup/secrets.mjs";

const { values: flags } = parseArgs({
  options: {
    env: { type: "string", short: "e", default: "production" },
    config: { type: "string", short: "c", default: "wrangler.toml" },
    "dry-run": { type: "boolean", default: false },
    ...OPERATOR_FLAGS,
  },
});
const env = flags.env;
const configPath = flags.config;
const dryRun = flags["dry-run"];
const target = ["--env", env, "--config", configPath];

function refused(problems) {
  if (problems.length)
    console.error(
      `\nsetup stopped before changing anything: [env.${env}] would not be safe to deploy.\n` +
        `${formatProblems(problems)}`,
    );
  return problems.length > 0;
}

async function main() {
  if (env !== "production" && env !== "staging")
    throw new Error(
      `setup prepares a deployed environment: --env production or --env staging (not ${JSON.stringify(env)}` +
        `). The top level of wrangler.toml is local development (npm run dev).`,
    );
  const { configProblems, NETWORKS } = await loadConfigCheck();
  const { text, section } = await readEnvironment(configPath, env);
  const workerName = section.name ?? "zeitvault";
  console.log(`${dryRun ? "Planning" : "Setting up"} [env.${env}] (Worker ${workerName}) from ${configPath}.`);

  // 1. The operator's values, checked before anything is read or made (every secret counted as set: only the values are
  //    judged here).
  const vars = { ...section.vars };
  const missing = await settleOperatorValues(vars, flags, NETWORKS);
  if (missing.length)
    throw new Error(`setup needs these values (no terminal to ask on):\n${missing.map((m) => `  ${m}`).join("\n")}`);
  if (refused(configProblems(vars, new Set([...GENERATED_SECRETS, "RELAYER_PRIVATE_KEY"])))) return 1;

  // 2. Read what the account has, then settle the secrets: those it lacks are made.
  console.log("Reading what the account has …");
  // One read alone first: with `wrangler login`, an expired token is refreshed (its refresh token used up)
  // by that one process, not raced by the parallel reads after it.
  const secrets = await secretNames(target);
  const found = await findResources(section, target, configPath);
  const existing = secrets ?? new Set();
  const relayer = await settleRelayerKey(vars, flags, existing);
  if (relayer.missing.length)
    throw new Error(`setup needs this value (no terminal to ask on):\n  ${relayer.missing[0]}`);
  const upload = secretsToUpload(existing, relayer.relayerKey);
  // A dry run makes no keys (those count as set, as the ones already there do), but checks the relayer's as given.
  const values = await makeSecrets(dryRun ? upload.filter((name) => name === "RELAYER_PRIVATE_KEY") : upload, {
    tsaName: `${workerName} TSA`,
    relayerKey: relayer.relayerKey,
  });
  const opaque = new Set([...existing, ...upload].filter((name) => !(name in values)));

  // 3. The whole result checked again, values and secrets, before anything is made.
  if (refused(configProblems({ ...vars, ...values }, opaque))) return 1;

  // 4. The plan.
  const changedVars = Object.keys(vars).filter((name) => vars[name] !== section.vars?.[name]);
  const databaseId = found.database.id;
  const writeId = databaseId !== found.database.configuredId;
  const missingQueues = found.queues.filter((q) => !q.exists).map((q) => q.name);
  const plan = [
    ...(databaseId ? [] : [`create D1 database ${found.database.name}`]),
    ...(found.bucket.exists ? [] : [`create R2 bucket ${found.bucket.name}`]),
    ...missingQueues.map((name) => `create queue ${name}`),
    ...(writeId ? [`write database_id ${databaseId ?? "(the new database's)"} into [[env.${env}.d1_databases]]`] : []),
    ...changedVars.map((name) => `write ${name} = ${JSON.stringify(vars[name])} into [env.${env}.vars]`),
    ...upload.map((name) => `upload secret ${name} (${describeSecret(name)}) with the deploy`),
    ...(found.pendingMigrations === null
      ? ["apply the D1 migrations not yet applied"]
      : found.pendingMigrations.map((m) => `apply migration ${m}`)),
  ];
  const deploy = secrets === null || plan.length > 0;
  if (deploy)
    plan.push(
      `deploy ${workerName} (npm run deploy -- --env ${env})` +
        `${secrets === null ? ": the Worker does not exist yet" : ""}`,
    );
  if (!plan.length) {
    console.log(`[env.${env}] is set up: nothing to create, write, upload, apply or deploy.`);
    return 0;
  }
  console.log(`\n${dryRun ? "Would" : "Will"}:\n${plan.map((step) => `  - ${step}`).join("\n")}\n`);
  if (dryRun) return 0;

  // 5. Do it, in an order that leaves a rerun able to finish an interrupted one.
  const id = await createResources(found);
  let next = id !== found.database.configuredId ? setDatabaseId(text, env, "DB", id) : text;
  for (const name of changedVars) next = setVar(next, env, name, vars[name]);
  if (next !== text) {
    await writeFile(configPath, next);
    console.log(`✓ wrote [env.${env}] in ${configPath}`);
  }
  if (found.pendingMigrations === null || found.pendingMigrations.length) await applyMigrations(target);
  // Applied just above: the deploy need not look again.
  if (deploy && !(await deployEnvironment({ env, configPath, secrets: values, migrate: false }))) return 1;
  showAdminToken(values);
  console.log(
    `\n[env.${env}] is set up. Once ${vars.BASE_URL} reaches the Worker, check it: ADMIN_TOKEN=… npm run ` +
      `doctor -- ${vars.BASE_URL}`,
  );
  return 0;
}

try {
  process.exitCode = await main();
} catch (error) {
  console.error(`\nsetup failed: ${error instanceof Error ? error.message : error}`);
  process.exitCode = 1;
}
