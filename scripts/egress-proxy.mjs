#!/usr/bin/env node
/**
 * The local egress proxy: Debian's tinyproxy on loopback, a real HTTP forward proxy taking CONNECT
 * with Basic proxy credentials, as the operator's fixed-IP egress does in production (Fixie,
 * QuotaGuard, a squid of one's own). egress-connectors' requests go through it (EGRESS_PROXY_URL).
 * `bind` makes it send from that local address (the tests use 127.0.0.2, so a target can tell a
 * request that came through the proxy from one that did not). For `npm run dev` and the tests.
 *
 * tinyproxy binds a port it is given; it cannot take a socket already bound. So a port found free
 * can be taken by another process before tinyproxy binds it: then tinyproxy exits ("Could not create
 * listening sockets") and the start is tried again on another port. It is ready once its own log
 * records a request made to that port with this start's random credentials, so another process on
 * the port is never taken for it. A proxy that will not start is reported (`missing`, with `why`),
 * never thrown; its temporary folder is removed on every path.
 *
 * Run directly: `node scripts/egress-proxy.mjs` listens on EGRESS_PROXY_PORT (default: a free port)
 * and prints EGRESS_PROXY_URL and EGRESS_IPS, as `npm run dev` passes them to the Worker.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const TINYPROXY = "/usr/bin/tinyproxy";
export const TINYPROXY_PACKAGES = ["tinyproxy"];
const USER = "zeitvault";
/** Starts tried, each on a port found free a moment before, before the proxy is reported as not started. */
const ATTEMPTS = 5;
const READY_MS = 10_000;

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

/**
 * Makes one proxied request to `port` with `password` (to a refused target: no name to resolve, no wait), marked
 * `nonce`.
 */
function probe(port, password, nonce) {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    const auth = Buffer.from(`${USER}:${password}`).toString("base64");
    socket.setTimeout(2000, () => socket.destroy());
    socket.once("connect", () =>
      socket.write(`GET http://127.0.0.1:9/${nonce} HTTP/1.0\r\nProxy-Authorization: Basic ${auth}\r\n\r\n`),
    );
    socket.on("data", () => socket.destroy());
    socket.once("error", () => undefined);
    socket.once("close", resolve);
  });
}

/**
 * Resolves once this start's tinyproxy has answered on `port`: its own log records the probe's
 * nonce, so another process that answers there (one that took the port first) is never taken for it.
 */
async function ready(port, password, log, deadline) {
  while (Date.now() < deadline) {
    const nonce = `ready-${randomBytes(8).toString("hex")}`;
    await probe(port, password, nonce);
    if ((await readFile(log, "utf8").catch(() => "")).includes(nonce)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`tinyproxy did not answer on port ${port} within ${READY_MS / 1000} s`);
}

/** One start on `port`: the running child, or the reason it is not running (the child is stopped then). */
async function startOn(dir, port, password, bind) {
  const log = path.join(dir, "tinyproxy.log");
  const config = [
    `Port ${port}`,
    "Listen 127.0.0.1",
    bind ? `Bind ${bind}` : "",
    "Timeout 120",
    "MaxClients 64",
    "User nobody",
    "Group nogroup",
    `LogFile "${log}"`,
    "LogLevel Connect",
    "Allow 127.0.0.1",
    `BasicAuth ${USER} ${password}`,
  ].filter(Boolean);
  await writeFile(path.join(dir, "tinyproxy.conf"), `${config.join("\n")}\n`);
  const child = spawn(TINYPROXY, ["-d", "-c", path.join(dir, "tinyproxy.conf")], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
  try {
    await Promise.race([
      ready(port, password, log, Date.now() + READY_MS),
      exited.then((code) => Promise.reject(new Error(`tinyproxy exited (${code}): ${stderr.trim() || "no message"}`))),
      new Promise((_, reject) => child.once("error", reject)),
    ]);
    return { child, log };
  } catch (err) {
    if (child.exitCode === null) {
      child.kill();
      await exited;
    }
    return { why: err.message };
  }
}

/**
 * Starts tinyproxy; answers its URL with credentials (EGRESS_PROXY_URL), the addresses it sends
 * from (EGRESS_IPS), its log (one line per CONNECT at LogLevel Connect), or `missing` with `why`
 * (and `installHint` when tinyproxy is not installed). `port`: the first port to try (then free
 * ones); `choosePort` picks each free one and `tmpRoot` holds the temporary folder (the tests make
 * the first pick taken, and look for the folder after a stop).
 * @param {{ bind?: string, port?: number, choosePort?: () => Promise<number>, tmpRoot?: string }} [options]
 */
export async function startEgressProxy({ bind, port, choosePort = freePort, tmpRoot = tmpdir() } = {}) {
  if (!existsSync(TINYPROXY)) {
    const installHint = `sudo apt-get install -y ${TINYPROXY_PACKAGES.join(" ")}`;
    return { missing: true, why: "tinyproxy is not installed", installHint };
  }
  const dir = await mkdtemp(path.join(tmpRoot, "zv-egress-"));
  const password = randomBytes(18).toString("base64url");
  const failures = [];
  try {
    // tinyproxy drops to nobody when started as root: its log must be writable by it.
    await chmod(dir, 0o777);
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const at = attempt === 0 && port ? port : await choosePort();
      const started = await startOn(dir, at, password, bind);
      if (started.why) {
        failures.push(`port ${at}: ${started.why}`);
        continue;
      }
      const { child, log } = started;
      return {
        missing: false,
        url: `http://${USER}:${password}@127.0.0.1:${at}`,
        port: at,
        ips: bind ?? "127.0.0.1",
        attempts: attempt + 1,
        readLog: () => readFile(log, "utf8").catch(() => ""),
        async stop() {
          if (child.exitCode === null) {
            child.kill();
            await new Promise((r) => child.once("exit", r));
          }
          await rm(dir, { recursive: true, force: true });
        },
      };
    }
  } catch (err) {
    failures.push(err.message);
  }
  await rm(dir, { recursive: true, force: true });
  return { missing: true, why: `tinyproxy would not start (${failures.join("; ")})` };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const proxy = await startEgressProxy({ port: Number(process.env.EGRESS_PROXY_PORT) || undefined });
  if (proxy.missing) {
    console.error(
      `egress proxy not started: ${proxy.why}${proxy.installHint ? `; install it with: ${proxy.installHint}` : ""}`,
    );
    process.exit(1);
  }
  console.log(`EGRESS_PROXY_URL=${proxy.url}\nEGRESS_IPS=${proxy.ips}`);
  for (const signal of ["SIGTERM", "SIGINT"])
    process.once(signal, () => void proxy.stop().finally(() => process.exit(0)));
}
