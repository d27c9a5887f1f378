/**
 * What setup.test.ts and deploy.test.ts share: a temporary copy of the repo's wrangler.toml (the real
 * one is never touched; its relative paths made absolute, so the copy builds the same Worker from
 * anywhere), and running `scripts/setup.mjs` / `scripts/deploy.mjs` as the operator does, with wrangler
 * pointed at the local Cloudflare API stand-in.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "smol-toml";
import type { CloudflareApi } from "../peers/cloudflare-api";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** A copy of wrangler.toml in a fresh temporary directory; returns its path. */
export async function configCopy(): Promise<string> {
  const text = (await readFile(path.join(ROOT, "wrangler.toml"), "utf8"))
    .replace(/^main = "worker\.ts"$/m, `main = ${JSON.stringify(path.join(ROOT, "worker.ts"))}`)
    .replace(/^directory = "\.\/public"$/m, `directory = ${JSON.stringify(path.join(ROOT, "public"))}`)
    .replaceAll(
      /^migrations_dir = "migrations"$/gm,
      `migrations_dir = ${JSON.stringify(path.join(ROOT, "migrations"))}`,
    )
    // [alias] targets are relative to the config's folder too (zod's locales, wrangler.toml).
    .replaceAll(
      /^("[^"]+") = "\.\/(src\/[^"]+)"$/gm,
      (_line, from: string, to: string) => `${from} = ${JSON.stringify(path.join(ROOT, to))}`,
    );
  const file = path.join(await mkdtemp(path.join(tmpdir(), "zeitvault-operator-")), "wrangler.toml");
  await writeFile(file, text);
  return file;
}

export interface EnvSection {
  name?: string;
  vars: Record<string, string>;
  d1_databases: { binding: string; database_name: string; database_id: string }[];
}

export async function envSection(configPath: string, env: string): Promise<EnvSection> {
  return (parse(await readFile(configPath, "utf8")) as unknown as { env: Record<string, EnvSection> }).env[env]!;
}

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a script from the repo root as `npm run` does, its wrangler talking to `api`; `extraEnv` adds ZEITVAULT_*
 * values.
 */
export function runScript(
  script: "setup" | "deploy",
  args: string[],
  api: CloudflareApi,
  extraEnv: Record<string, string> = {},
): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join("scripts", `${script}.mjs`), ...args],
      { cwd: ROOT, env: { ...process.env, ...api.env, ...extraEnv }, maxBuffer: 64 << 20 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

/** The requests that changed something, as `METHOD path` lines (for a readable failure). */
export const mutations = (api: CloudflareApi, from = 0) =>
  api.requests
    .slice(from)
    .filter((r) => r.mutating)
    .map((r) => `${r.method} ${r.path} ${r.summary}`);
/** A route the stand-in did not know: wrangler asked for something it does not implement. */
export const unknownRoutes = (api: CloudflareApi) =>
  api.requests.filter((r) => r.unknown).map((r) => `${r.method} ${r.path}`);

/** EIP-55 test vector (a valid checksum), and the same address with one letter's case flipped. */
export const PAY_TO = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";
export const PAY_TO_TYPO = "0x5aaeb6053F3E94C9b9A09f33669435E7Ef1BeAed";
