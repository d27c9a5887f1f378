/**
 * src/operator/config-check.ts for the Node scripts: the Worker's own list of unsafe settings, so setup,
 * deploy and the running service never disagree. Node 20 cannot strip types, so it is bundled on the
 * fly with esbuild into a temporary module, imported, and the file removed.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

const SOURCE = fileURLToPath(new URL("../../src/operator/config-check.ts", import.meta.url));

/** @returns {Promise<typeof import("../../src/operator/config-check.ts")>} */
export async function loadConfigCheck() {
  const dir = await mkdtemp(path.join(tmpdir(), "zeitvault-config-check-"));
  const outfile = path.join(dir, "config-check.mjs");
  try {
    await build({ entryPoints: [SOURCE], bundle: true, format: "esm", platform: "node", outfile, logLevel: "silent" });
    return await import(pathToFileURL(outfile).href);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** One problem a line, each with its fix: what setup and deploy print when they refuse. */
export function formatProblems(problems) {
  return problems.map((p) => `  ✘ ${p.setting} ${p.problem}.\n      Fix: ${p.fix}`).join("\n");
}
