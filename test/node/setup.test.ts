/**
 * `npm run setup` against a local stand-in for Cloudflare's API (test/peers/cloudflare-api), driven by
 * the real wrangler: a fresh account gets every resource, secret, migration and a deploy; a second
 * run only reads; --dry-run changes nothing; staging gets its own resources; bad operator input is
 * refused, named, before anything is made. Each test works on its own copy of wrangler.toml.
 */
import { readFile, readdir } from "node:fs/promises";
import { afterEach, beforeEach, expect, it } from "vitest";
import { startCloudflareApi, type CloudflareApi } from "../peers/cloudflare-api";
import { configCopy, envSection, mutations, PAY_TO, PAY_TO_TYPO, runScript, unknownRoutes } from "./operator-scripts";

const MIGRATIONS = (await readdir("migrations")).filter((f) => f.endsWith(".sql")).sort();
/** The newest Durable Object migration in wrangler.toml (commented-out ones aside): what a first deploy applies. */
const LATEST_DO_MIGRATION = [...(await readFile("wrangler.toml", "utf8")).matchAll(/^tag = "(v\d+)"$/gm)].at(-1)![1];
const PRODUCTION = [
  "--env",
  "production",
  "--base-url",
  "https://api.example.com/",
  "--pay-to",
  PAY_TO,
  "--facilitator-url",
  "https://facilitator.example.com",
];
const GENERATED = ["ADMIN_TOKEN", "DATA_ENCRYPTION_KEY", "OAUTH_PRIVATE_JWK", "TSA_CERT_PEM", "TSA_PRIVATE_JWK"];

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

const setup = (args: string[], env?: Record<string, string>) =>
  runScript("setup", [...args, "--config", config], api, env);

it(
  "takes a fresh account to a deployed production service, and a second run changes nothing",
  { timeout: 240_000 },
  async () => {
    const first = await setup(PRODUCTION);
    expect(first.stderr + first.stdout).toContain("is set up");
    expect(first.code).toBe(0);

    const { account } = api;
    const [db] = [...account.d1.values()];
    expect(db).toMatchObject({ name: "zeitvault", migrations: MIGRATIONS });
    expect([...account.buckets.keys()]).toEqual(["zeitvault"]);
    expect([...account.queues.keys()].sort()).toEqual(["zeitvault-deliveries", "zeitvault-deliveries-dlq"]);
    const worker = account.scripts.get("zeitvault")!;
    expect(worker).toMatchObject({ draft: false, migrationTag: LATEST_DO_MIGRATION, crons: ["17 3 * * *"] });
    expect(worker.deployed).not.toBeNull();
    expect([...worker.secrets.keys()].sort()).toEqual(GENERATED);
    expect(account.queues.get("zeitvault-deliveries")!.consumers).toMatchObject([
      { script_name: "zeitvault", dead_letter_queue: "zeitvault-deliveries-dlq" },
    ]);

    // The generated secrets are real keys, and none but the admin token (once) is printed or recorded.
    const secrets = Object.fromEntries(worker.secrets);
    expect(JSON.parse(secrets.OAUTH_PRIVATE_JWK!)).toMatchObject({ kty: "RSA", alg: "RS256", d: expect.any(String) });
    expect(JSON.parse(secrets.TSA_PRIVATE_JWK!)).toMatchObject({ kty: "EC", crv: "P-256", d: expect.any(String) });
    expect(secrets.TSA_CERT_PEM).toMatch(/^-----BEGIN CERTIFICATE-----\n/);
    expect(Buffer.from(secrets.DATA_ENCRYPTION_KEY!, "base64")).toHaveLength(32);
    expect(first.stdout.split(secrets.ADMIN_TOKEN!)).toHaveLength(2);
    const said = first.stdout + first.stderr + JSON.stringify(api.requests);
    for (const name of ["OAUTH_PRIVATE_JWK", "TSA_PRIVATE_JWK", "DATA_ENCRYPTION_KEY"])
      expect(said).not.toContain(name === "DATA_ENCRYPTION_KEY" ? secrets[name] : JSON.parse(secrets[name]!).d);
    expect(JSON.stringify(api.requests)).not.toContain(secrets.ADMIN_TOKEN);

    // The copy now names the database and carries the operator's values (the trailing slash dropped).
    const section = await envSection(config, "production");
    expect(section.d1_databases[0]!.database_id).toBe(db!.uuid);
    expect(section.vars).toMatchObject({
      BASE_URL: "https://api.example.com",
      X402_PAY_TO: PAY_TO,
      FACILITATOR_URL: "https://facilitator.example.com",
      X402_NETWORK: "base",
      X402_CHAIN_ID: "8453",
    });

    // Again, with no values given: everything comes from the file and the account, and nothing changes.
    const before = await readFile(config, "utf8");
    const seen = api.requests.length;
    const second = await setup(["--env", "production"]);
    expect(second.stderr).toBe("");
    expect(second.stdout).toContain("nothing to create, write, upload, apply or deploy");
    expect(second.code).toBe(0);
    expect(mutations(api, seen)).toEqual([]);
    expect(api.requests.length).toBeGreaterThan(seen);
    expect(await readFile(config, "utf8")).toBe(before);
  },
);

it("--dry-run on a fresh account prints the plan and changes nothing", { timeout: 120_000 }, async () => {
  const before = await readFile(config, "utf8");
  const run = await setup([...PRODUCTION, "--dry-run"]);
  expect(run.code).toBe(0);
  for (const step of [
    "create D1 database zeitvault",
    "create R2 bucket zeitvault",
    "create queue zeitvault-deliveries-dlq",
    "write X402_PAY_TO",
    "upload secret DATA_ENCRYPTION_KEY",
    `apply migration ${MIGRATIONS[0]}`,
    "deploy zeitvault",
  ]) {
    expect(run.stdout).toContain(step);
  }
  expect(mutations(api)).toEqual([]);
  expect(await readFile(config, "utf8")).toBe(before);
  expect(api.account.d1.size + api.account.buckets.size + api.account.queues.size + api.account.scripts.size).toBe(0);
});

it(
  "--env staging sets up staging's own resources, with direct settlement's relayer key",
  { timeout: 240_000 },
  async () => {
    const relayer = `0x${"ab".repeat(32)}`;
    const run = await setup(
      [
        "--env",
        "staging",
        "--base-url",
        "https://staging.example.com",
        "--pay-to",
        PAY_TO,
        "--settlement",
        "direct",
        "--rpc-url",
        "https://sepolia.base.org",
      ],
      { ZEITVAULT_RELAYER_PRIVATE_KEY: relayer },
    );
    expect(run.stderr + run.stdout).toContain("is set up");
    expect(run.code).toBe(0);
    expect(run.stdout + run.stderr).not.toContain(relayer);

    const { account } = api;
    expect([...account.d1.values()].map((db) => db.name)).toEqual(["zeitvault-staging"]);
    expect([...account.buckets.keys()]).toEqual(["zeitvault-staging"]);
    expect([...account.queues.keys()].sort()).toEqual([
      "zeitvault-staging-deliveries",
      "zeitvault-staging-deliveries-dlq",
    ]);
    expect([...account.scripts.keys()]).toEqual(["zeitvault-staging"]);
    const worker = account.scripts.get("zeitvault-staging")!;
    expect([...worker.secrets.keys()].sort()).toEqual([...GENERATED, "RELAYER_PRIVATE_KEY"].sort());
    expect(worker.secrets.get("RELAYER_PRIVATE_KEY")).toBe(relayer);

    const staging = await envSection(config, "staging");
    expect(staging.d1_databases[0]!.database_id).toBe([...account.d1.keys()][0]);
    expect(staging.vars).toMatchObject({
      ENVIRONMENT: "staging",
      X402_NETWORK: "base-sepolia",
      X402_SETTLEMENT: "direct",
      RPC_URL: "https://sepolia.base.org",
    });
    // Production's section is as it was.
    expect((await envSection(config, "production")).d1_databases[0]!.database_id).toBe("");
  },
);

it("refuses bad operator input before anything is made, naming the setting", { timeout: 120_000 }, async () => {
  const before = await readFile(config, "utf8");
  const cases: [string[], string][] = [
    [["--pay-to", "0x000000000000000000000000000000000000dEaD"], "X402_PAY_TO is the zero or a burn address"],
    [["--pay-to", PAY_TO_TYPO], "X402_PAY_TO fails its EIP-55 checksum"],
    [["--base-url", "http://api.example.com"], "BASE_URL must be an https:// URL"],
    [["--network", "base-sepolia"], "X402_NETWORK is base-sepolia, a testnet"],
  ];
  for (const [bad, named] of cases) {
    const run = await setup([...PRODUCTION, ...bad]);
    expect(run.code, bad.join(" ")).toBe(1);
    expect(run.stderr).toContain("stopped before changing anything");
    expect(run.stderr).toContain(named);
  }
  // A value missing with no terminal to ask on: the flag is named.
  const missing = await setup(["--env", "production", "--base-url", "https://api.example.com"]);
  expect(missing.code).toBe(1);
  expect(missing.stderr).toContain("--pay-to (or ZEITVAULT_PAY_TO)");
  expect(missing.stderr).toContain("--facilitator-url");

  // Refused on the values alone: not even a read.
  expect(api.requests).toEqual([]);
  expect(await readFile(config, "utf8")).toBe(before);
});
