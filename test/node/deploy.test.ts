/**
 * `npm run deploy` against the local Cloudflare API stand-in: an unsafe production config is refused,
 * each problem named with its fix, before wrangler uploads anything; a safe one is deployed; the
 * top-level development config is never deployed.
 */
import { readdir, readFile, writeFile } from "node:fs/promises";
import { afterEach, beforeEach, expect, it } from "vitest";
import { setDatabaseId, setVar } from "../../scripts/lib/wrangler-toml.mjs";
import { startCloudflareApi, type CloudflareApi } from "../peers/cloudflare-api";
import { configCopy, mutations, PAY_TO, runScript, unknownRoutes } from "./operator-scripts";

let api: CloudflareApi;
let config: string;
beforeEach(async () => {
  api = await startCloudflareApi();
  config = await configCopy();
});
afterEach(async () => {
  expect(unknownRoutes(api)).toEqual([]);
  await api.stop();
});

const deploy = (args: string[]) => runScript("deploy", [...args, "--config", config], api);

/**
 * What setup would have left: the resources, a Worker with its secrets (but `leaveOut`), and the operator's values in
 * the copy.
 */
async function arrange(vars: Record<string, string>, leaveOut: string[] = []) {
  const id = api.seed.database("zeitvault", ["0001_init.sql"]);
  api.seed.bucket("zeitvault");
  for (const queue of ["zeitvault-deliveries", "zeitvault-deliveries-dlq"]) api.seed.queue(queue);
  const secrets = {
    OAUTH_PRIVATE_JWK: "x",
    TSA_PRIVATE_JWK: "x",
    TSA_CERT_PEM: "x",
    DATA_ENCRYPTION_KEY: "x",
    ADMIN_TOKEN: "x",
  };
  api.seed.worker(
    "zeitvault",
    Object.fromEntries(Object.entries(secrets).filter(([name]) => !leaveOut.includes(name))),
  );
  let text = setDatabaseId(await readFile(config, "utf8"), "production", "DB", id);
  for (const [name, value] of Object.entries(vars)) text = setVar(text, "production", name, value);
  await writeFile(config, text);
}

const SAFE = {
  BASE_URL: "https://api.example.com",
  X402_PAY_TO: PAY_TO,
  FACILITATOR_URL: "https://facilitator.example.com",
};

it("refuses an unsafe production config, naming each problem with its fix", { timeout: 120_000 }, async () => {
  await arrange({ ...SAFE, X402_PAY_TO: "", X402_SETTLEMENT: "none" }, ["DATA_ENCRYPTION_KEY"]);
  const run = await deploy(["--env", "production"]);
  expect(run.code).toBe(1);
  expect(run.stderr).toContain("is not safe to deploy");
  expect(run.stderr).toContain("✘ X402_PAY_TO is not set");
  expect(run.stderr).toContain("✘ X402_SETTLEMENT is none");
  expect(run.stderr).toContain("✘ DATA_ENCRYPTION_KEY is not set");
  expect(run.stderr).toContain("Fix: Set it to facilitator or direct.");
  expect(mutations(api)).toEqual([]);
});

it("refuses an environment setup has not made a database for yet", { timeout: 120_000 }, async () => {
  const run = await deploy(["--env", "staging"]);
  expect(run.code).toBe(1);
  expect(run.stderr).toContain("D1 DB (zeitvault-staging) has no database_id");
  expect(run.stderr).toContain("npm run setup -- --env staging");
  expect(mutations(api)).toEqual([]);
});

it("deploys a safe production config, after the migrations the code needs", { timeout: 180_000 }, async () => {
  await arrange(SAFE);
  const before = api.account.scripts.get("zeitvault")!.deployed;
  const run = await deploy([]);
  expect(run.stderr + run.stdout).toContain("Deployed zeitvault");
  expect(run.code).toBe(0);
  const worker = api.account.scripts.get("zeitvault")!;
  expect(worker.deployed).not.toBe(before);
  expect(worker.bindings).toContainEqual({ type: "plain_text", name: "X402_PAY_TO", text: PAY_TO });
  // Deployed: as a version made live, or, while a Durable Object migration is pending (a new class), as a whole
  // script upload, which wrangler uses then because a version cannot carry a migration.
  const deployedBy = (m: string) =>
    (m.startsWith("POST /accounts/") && m.includes("/deployments")) ||
    /^PUT \/accounts\/\w+\/workers\/scripts\/zeitvault\?/.test(m);
  expect(mutations(api).some(deployedBy)).toBe(true);
  // The database had only the first migration: the rest landed before the code that needs them.
  const migrations = (await readdir("migrations")).filter((f) => f.endsWith(".sql")).sort();
  expect([...api.account.d1.values()][0]!.migrations).toEqual(migrations);
  const steps = mutations(api);
  const deployedAt = steps.findIndex(deployedBy);
  expect(deployedAt).toBeGreaterThan(-1);
  expect(steps.findLastIndex((m) => m.includes("/d1/database/"))).toBeLessThan(deployedAt);
});

it("never deploys the top-level development config", async () => {
  const run = await deploy(["--env", ""]);
  expect(run.code).toBe(1);
  expect(run.stderr).toContain("local development config");
  expect(run.stderr).toContain("--env production");
  expect(api.requests).toEqual([]);
});
