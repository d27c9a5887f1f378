/**
 * Debian's Chromium for tests of pages meant for people, driven by playwright-core (which
 * must not download a browser of its own). Installed here when missing and apt-get can
 * (as root, or through sudo), so `npm test` keeps working on a fresh machine; otherwise
 * the failure names the one command that installs it.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

const CHROMIUM = "/usr/bin/chromium";
const INSTALL = ["apt-get", "install", "-y", "-qq", "chromium"];

function install(): void {
  const root = process.getuid?.() === 0;
  const run = (args: string[]) => execFileSync(root ? args[0]! : "sudo", root ? args.slice(1) : ["-n", ...args], { stdio: "ignore", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  run(["apt-get", "update", "-qq"]);
  run(INSTALL);
}

export function chromiumPath(): string {
  if (existsSync(CHROMIUM)) return CHROMIUM;
  try {
    install();
  } catch (err) {
    throw new Error(`Debian's chromium is needed for the page tests and could not be installed (${err instanceof Error ? err.message : err}): run \`sudo ${INSTALL.join(" ")}\`.`);
  }
  if (!existsSync(CHROMIUM)) throw new Error(`apt-get ran, but ${CHROMIUM} is not there: run \`sudo ${INSTALL.join(" ")}\`.`);
  return CHROMIUM;
}

/** Headless, with the flags this machine's closed network needs (no background calls home). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}
