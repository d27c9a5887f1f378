/**
 * A local OpenSSL peer for tests (runs in Node; workerd cannot spawn processes and
 * reaches it on 127.0.0.1). It writes what it is sent to a fresh temp dir and runs
 * the real `openssl`, answering `{ status, output }` (exit code, stdout + stderr):
 *   POST /ts-verify { tsr, cert_pem, digest? | data_base64? }
 *        openssl ts -verify -in <tsr> (-digest <hex> | -data <file>) -CAfile <cert>
 *   POST /ts-text   { tsr }       openssl ts -reply -in <tsr> -text
 *   POST /x509      { cert_pem }  openssl x509 -noout -text -purpose
 * `tsr` is base64 DER. Arguments are passed without a shell.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

export interface OpensslAnswer {
  status: number;
  output: string;
}

interface Request {
  tsr?: string;
  cert_pem?: string;
  digest?: string;
  data_base64?: string;
}

function openssl(args: string[]): Promise<OpensslAnswer> {
  return new Promise((resolve) => {
    execFile("openssl", args, { timeout: 20_000 }, (err, stdout, stderr) => {
      const status = err ? (typeof err.code === "number" ? err.code : 127) : 0;
      resolve({ status, output: `${stdout}${stderr}` });
    });
  });
}

async function readJson(req: IncomingMessage): Promise<Request> {
  let body = "";
  for await (const chunk of req) body += chunk;
  return JSON.parse(body) as Request;
}

async function handle(route: string, body: Request, dir: string): Promise<OpensslAnswer | null> {
  const file = async (name: string, content: string | Buffer) => {
    const p = path.join(dir, name);
    await writeFile(p, content);
    return p;
  };
  if (route === "/ts-verify") {
    const args = [
      "ts",
      "-verify",
      "-in",
      await file("stamp.tsr", Buffer.from(body.tsr!, "base64")),
      "-CAfile",
      await file("tsa.pem", body.cert_pem!),
    ];
    if (body.digest !== undefined) args.push("-digest", body.digest);
    if (body.data_base64 !== undefined)
      args.push("-data", await file("data.bin", Buffer.from(body.data_base64, "base64")));
    return openssl(args);
  }
  if (route === "/ts-text")
    return openssl(["ts", "-reply", "-in", await file("stamp.tsr", Buffer.from(body.tsr!, "base64")), "-text"]);
  if (route === "/x509")
    return openssl(["x509", "-noout", "-text", "-purpose", "-in", await file("cert.pem", body.cert_pem!)]);
  return null;
}

export async function startOpensslPeer(): Promise<{ url: string; stop(): Promise<void> }> {
  const server = createServer(async (req, res) => {
    const dir = await mkdtemp(path.join(tmpdir(), "zeitvault-openssl-"));
    try {
      const answer = req.method === "POST" ? await handle(req.url ?? "", await readJson(req), dir) : null;
      if (!answer) res.writeHead(404).end();
      else res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
    } catch (err) {
      res.writeHead(500, { "content-type": "text/plain" }).end(String(err));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, stop: () => new Promise((resolve) => server.close(() => resolve())) };
}
