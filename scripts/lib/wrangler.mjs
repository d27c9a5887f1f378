/**
 * Runs the project's own wrangler (node_modules, the version the toolchain pins) for setup and deploy,
 * with the caller's login or CLOUDFLARE_API_TOKEN. Reads are captured and parsed; a deploy passes its
 * output through. stdin is an empty pipe, so wrangler never prompts: what it needs comes from the
 * command line (never a secret: those go in deploy's --secrets-file, scripts/lib/deploy.mjs).
 */
import { spawn } from "node:child_process";
import { createRequire } from "node:module";

const WRANGLER = createRequire(import.meta.url).resolve("wrangler/bin/wrangler.js");

/**
 * @param {string[]} args
 * @param {{ show?: boolean }} [options] show: pass wrangler's output through to ours.
 * @returns {Promise<{ code: number, stdout: string, stderr: string }>}
 */
export function wrangler(args, { show = false } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WRANGLER, ...args], {
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, WRANGLER_HIDE_BANNER: process.env.WRANGLER_HIDE_BANNER ?? "true" },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
      if (show) process.stdout.write(chunk);
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
      if (show) process.stderr.write(chunk);
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? 1, stdout, stderr }));
    child.stdin.end();
  });
}

/** A wrangler command that must succeed: its output, or an error carrying what wrangler said. */
export async function wranglerOk(args, options) {
  const result = await wrangler(args, options);
  if (result.code !== 0)
    throw new Error(`wrangler ${args.join(" ")} failed:\n${(result.stderr || result.stdout).trim()}`);
  return result.stdout;
}

/** The names of the Worker's secrets (wrangler never shows values), or null when the Worker does not exist yet. */
export async function secretNames(target) {
  const result = await wrangler(["secret", "list", "--format", "json", ...target]);
  if (result.code !== 0) {
    if (/Worker "[^"]*".* not found/.test(result.stderr + result.stdout)) return null;
    throw new Error(`wrangler secret list failed:\n${(result.stderr || result.stdout).trim()}`);
  }
  return new Set(JSON.parse(result.stdout).map((secret) => secret.name));
}
