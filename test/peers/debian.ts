/**
 * Debian packages the tests need (chromium, poppler-utils): installed when missing and apt-get can
 * (as root, or through sudo), so `npm test` keeps working on a fresh machine; otherwise the failure
 * names the one command that installs them.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

/** Answers `file` once the packages that provide it are installed. */
export function debianFile(file: string, packages: string[], purpose: string): string {
  if (existsSync(file)) return file;
  const command = ["apt-get", "install", "-y", "-qq", ...packages];
  try {
    const root = process.getuid?.() === 0;
    const run = (args: string[]) =>
      execFileSync(root ? args[0]! : "sudo", root ? args.slice(1) : ["-n", ...args], {
        stdio: "ignore",
        env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
      });
    run(["apt-get", "update", "-qq"]);
    run(command);
  } catch (err) {
    throw new Error(
      `${packages.join(", ")} (for ${purpose}) could not be installed (` +
        `${err instanceof Error ? err.message : err}): run \`sudo ${command.join(" ")}\`.`,
    );
  }
  if (!existsSync(file)) throw new Error(`apt-get ran, but ${file} is not there: run \`sudo ${command.join(" ")}\`.`);
  return file;
}
