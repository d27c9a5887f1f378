#!/usr/bin/env node
/**
 * The local egress proxy: Debian's tinyproxy on loopback, a real HTTP forward proxy taking CONNECT
 * with Basic proxy credentials, as the operator's fixed-IP egress does in production (Fixie,
 * QuotaGuard, a squid of one's own). egress-connectors' requests go through it (EGRESS_PROXY_URL).
 * `bind` makes it send from that local address (the tests use 127.0.0.2, so a target can tell a
 * request that came through the proxy from one that did not). For `npm run dev` and the tests.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

export const TINYPROXY = "/usr/bin/tinyproxy";
export const TINYPROXY_PACKAGES = ["tinyproxy"];

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

async function listening(port, deadline) {
  while (Date.now() < deadline) {
    const up = await new Promise((resolve) => {
      const probe = createServer().once("error", () => resolve(true)).listen(port, "127.0.0.1", () => probe.close(() => resolve(false)));
    });
    if (up) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`tinyproxy did not listen on ${port}`);
}

/**
 * Starts tinyproxy; answers its URL with credentials (EGRESS_PROXY_URL), the addresses it sends
 * from (EGRESS_IPS), its log (one line per CONNECT at LogLevel Connect), or `missing` when
 * tinyproxy is not installed.
 */
export async function startEgressProxy({ bind } = {}) {
  if (!existsSync(TINYPROXY)) return { missing: true, installHint: `sudo apt-get install -y ${TINYPROXY_PACKAGES.join(" ")}` };
  const dir = await mkdtemp(path.join(tmpdir(), "zv-egress-"));
  // tinyproxy drops to nobody when started as root: its log must be writable by it.
  await chmod(dir, 0o777);
  const port = await freePort();
  const log = path.join(dir, "tinyproxy.log");
  const password = "egress-test-password";
  const config = [
    `Port ${port}`, "Listen 127.0.0.1", bind ? `Bind ${bind}` : "", "Timeout 120", "MaxClients 64",
    "User nobody", "Group nogroup", `LogFile "${log}"`, "LogLevel Connect", "Allow 127.0.0.1", `BasicAuth zeitvault ${password}`,
  ].filter(Boolean);
  await writeFile(path.join(dir, "tinyproxy.conf"), `${config.join("\n")}\n`);
  const child = spawn(TINYPROXY, ["-d", "-c", path.join(dir, "tinyproxy.conf")], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  try {
    await Promise.race([
      listening(port, Date.now() + 10_000),
      new Promise((_, reject) => child.once("exit", (code) => reject(new Error(`tinyproxy exited (${code}): ${stderr}`)))),
    ]);
  } catch (err) {
    child.kill();
    throw err;
  }
  return {
    missing: false,
    url: `http://zeitvault:${password}@127.0.0.1:${port}`,
    ips: bind ?? "127.0.0.1",
    readLog: () => readFile(log, "utf8").catch(() => ""),
    async stop() {
      child.kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
