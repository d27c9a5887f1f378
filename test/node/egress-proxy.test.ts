/**
 * The local egress proxy (scripts/egress-proxy.mjs) always starts or says why: a port taken between
 * being found free and being bound by tinyproxy is retried on another; a proxy that cannot start at
 * all is reported, not thrown; its temporary folder is gone on every path; and it runs on its own
 * as `node scripts/egress-proxy.mjs`, as the engines do.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, readdir, rm } from "node:fs/promises";
import { createServer as createHttpServer, request } from "node:http";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startEgressProxy, TINYPROXY } from "../../scripts/egress-proxy.mjs";

let root: string;
let squatter: Server;
let taken: number;

beforeAll(async () => {
  if (!existsSync(TINYPROXY)) throw new Error("tinyproxy is not installed: sudo apt-get install -y tinyproxy");
  // tinyproxy drops to nobody when started as root: it must be able to reach its folder under this one.
  root = await mkdtemp(path.join(tmpdir(), "zv-egress-test-"));
  await chmod(root, 0o711);
  // Something else holds a port: what happens when another process binds the port found free first.
  squatter = createServer((socket) => socket.end("HTTP/1.0 200 OK\r\n\r\nnot a proxy")).unref();
  await new Promise<void>((resolve) => squatter.listen(0, "127.0.0.1", resolve));
  taken = (squatter.address() as { port: number }).port;
});

afterAll(async () => {
  squatter?.close();
  await rm(root, { recursive: true, force: true });
});

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

/** A GET through the proxy at `proxyUrl` (credentials in it) to `target`: the answer's status and body. */
function viaProxy(proxyUrl: string, target: string): Promise<{ status: number; body: string }> {
  const proxy = new URL(proxyUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: proxy.hostname,
        port: proxy.port,
        path: target,
        headers: {
          "proxy-authorization": `Basic ${Buffer.from(`${proxy.username}:${proxy.password}`).toString("base64")}`,
        },
      },
      (res) => {
        let body = "";
        res.on("data", (d) => (body += d));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.once("error", reject);
    req.end();
  });
}

it("starts on another port when the first one it picked is taken before tinyproxy binds it, and forwards", async () => {
  let picks = 0;
  const proxy = await startEgressProxy({ tmpRoot: root, choosePort: async () => (picks++ === 0 ? taken : freePort()) });
  expect(proxy.missing, proxy.why).toBe(false);
  expect(proxy.attempts).toBe(2);
  expect(proxy.port).not.toBe(taken);
  const target = createHttpServer((_req, res) => res.end("through the proxy"));
  await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
  try {
    const { port } = target.address() as { port: number };
    await expect(viaProxy(proxy.url!, `http://127.0.0.1:${port}/hello`)).resolves.toEqual({
      status: 200,
      body: "through the proxy",
    });
  } finally {
    await new Promise((resolve) => target.close(resolve));
    await proxy.stop!();
  }
  expect(await readdir(root)).toEqual([]);
});

it("a proxy that cannot start is reported with the reason, not thrown, and leaves no folder behind", async () => {
  const proxy = await startEgressProxy({ tmpRoot: root, port: taken, choosePort: async () => taken });
  expect(proxy.missing).toBe(true);
  expect(proxy.why).toMatch(
    /^tinyproxy would not start \(port \d+: tinyproxy exited \(\d+\): .*Could not create listening sockets/,
  );
  expect(await readdir(root)).toEqual([]);
});

it("runs on its own, printing the URL and addresses `npm run dev` passes on, and stops cleanly", async () => {
  const child = spawn(process.execPath, ["scripts/egress-proxy.mjs"], {
    env: { ...process.env, TMPDIR: root },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  const deadline = Date.now() + 15_000;
  while (!out.includes("EGRESS_IPS=") && child.exitCode === null && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 50));
  expect(out).toMatch(/^EGRESS_PROXY_URL=http:\/\/zeitvault:[\w-]+@127\.0\.0\.1:\d+\nEGRESS_IPS=127\.0\.0\.1\n$/);
  try {
    const url = /EGRESS_PROXY_URL=(\S+)/.exec(out)![1]!;
    // It is a proxy, and refuses other credentials.
    expect((await viaProxy(url.replace(/\/\/[^@]+@/, "//zeitvault:wrong@"), "http://127.0.0.1:9/")).status).toBe(401);
  } finally {
    child.kill("SIGTERM");
  }
  expect(await new Promise((resolve) => child.once("exit", resolve))).toBe(0);
  expect(await readdir(root)).toEqual([]);
});
