/**
 * Runs the official MCP conformance suite (tools/mcp-conformance: @modelcontextprotocol/conformance
 * with the Node 22 it needs, both from npm, in a folder of their own) against a running server, and
 * reads back each scenario's checks. The folder is installed with `npm ci` when it is not (.ci/run
 * installs it before `npm test`; a developer's first `npm test` does it here).
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
export const SUITE_DIR = path.resolve("tools/mcp-conformance");
const NODE_BIN = path.join(SUITE_DIR, "node_modules/node/bin");
const CLI = path.join(SUITE_DIR, "node_modules/@modelcontextprotocol/conformance/dist/index.js");

export async function installSuite(): Promise<void> {
  if (existsSync(CLI) && existsSync(path.join(NODE_BIN, "node"))) return;
  await run("npm", ["ci", "--prefix", SUITE_DIR, "--no-audit", "--no-fund"], {
    timeout: 300_000,
    maxBuffer: 16 * 1024 * 1024,
  });
}

export interface Outcome {
  scenario: string;
  failures: string[];
  warnings: string[];
}

/** The active suite against `url`, under Node 22 (first on the PATH, so what the suite spawns runs on it too). */
export async function runSuite(url: string): Promise<{ outcomes: Outcome[]; nodeVersion: string }> {
  const out = await mkdtemp(path.join(tmpdir(), "mcp-conformance-"));
  const env = { ...process.env, PATH: `${NODE_BIN}${path.delimiter}${process.env.PATH ?? ""}`, NO_COLOR: "1" };
  try {
    const nodeVersion = (await run(path.join(NODE_BIN, "node"), ["--version"], { env })).stdout.trim();
    // Exits 1 while any scenario fails: the outcomes are read from the result files and judged by the caller.
    await run(path.join(NODE_BIN, "node"), [CLI, "server", "--url", url, "--output-dir", out], {
      env,
      timeout: 300_000,
      maxBuffer: 16 * 1024 * 1024,
    }).catch((err: { code?: number }) => {
      if (err.code !== 1) throw err;
    });
    const outcomes: Outcome[] = [];
    for (const dir of (await readdir(out)).sort()) {
      const checks = JSON.parse(await readFile(path.join(out, dir, "checks.json"), "utf8")) as {
        status: string;
        name: string;
        errorMessage?: string;
        details?: { message?: string };
      }[];
      const said = (c: (typeof checks)[number]) => `${c.name}: ${c.errorMessage ?? c.details?.message ?? ""}`;
      outcomes.push({
        scenario: dir.replace(/^server-/, "").replace(/-\d{4}-\d{2}-\d{2}T.*$/, ""),
        failures: checks.filter((c) => c.status === "FAILURE").map(said),
        warnings: checks.filter((c) => c.status === "WARNING").map(said),
      });
    }
    return { outcomes, nodeVersion };
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

/** The expected-failures file: the suite's own format, every entry with its reason after `#`. */
export async function expectedFailures(): Promise<Map<string, string>> {
  const text = await readFile(path.join(SUITE_DIR, "expected-failures.yml"), "utf8");
  const entries = new Map<string, string>();
  for (const line of text.split("\n")) {
    const entry = /^\s+-\s+([\w-]+)\s*(?:#\s*(.*))?$/.exec(line);
    if (entry) entries.set(entry[1]!, (entry[2] ?? "").trim());
  }
  return entries;
}
