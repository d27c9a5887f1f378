/**
 * A real S3-compatible server for the transfer tests: s3rver (from npm, on loopback, files in a temporary folder), with
 * one bucket. It checks that a request's access key exists but not its SigV4 signature, so a front on its own port
 * re-signs every request with AWS's own signer (@smithy/signature-v4) over the headers the request says it signed, and
 * refuses a mismatch with 403 SignatureDoesNotMatch, as S3 does: the worker's signing is checked by AWS's code.
 * s3rver has no AbortMultipartUpload (it would take `DELETE …?uploadId=` for a DeleteObject): the front answers it
 * as S3 does, dropping the upload's parts. A control address makes and reads large objects in Node, so a test never
 * holds them in workerd:
 *   POST {controlUrl}/seed?key=…&size=…   writes `size` bytes of the test pattern (pattern.ts)
 *   GET {controlUrl}/digest?key=…         `{ size, sha256 }` of what the bucket holds, or 404
 *   GET {controlUrl}/uploads              `{ open }`: multipart uploads not completed or aborted
 *   GET {controlUrl}/reads?key=…          `{ reads }`: GETs of the object through the front (the control's own
 *                                         included)
 *   POST {controlUrl}/fail-reads?key=…&count=n   the next n GETs of the object through the front answer 500
 *                                         InternalError, as S3 may
 */
import { createHash } from "node:crypto";
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { Sha256 } from "@aws-crypto/sha256-js";
import { SignatureV4 } from "@smithy/signature-v4";
import { AwsClient } from "aws4fetch";
import S3rver from "s3rver";
import { pattern } from "./pattern";

export const S3_BUCKET = "zv-transfers";
export const S3_ACCESS_KEY = "S3RVER";
export const S3_SECRET_KEY = "S3RVER";
const REGION = "us-east-1";

const signer = new SignatureV4({
  service: "s3",
  region: REGION,
  credentials: { accessKeyId: S3_ACCESS_KEY, secretAccessKey: S3_SECRET_KEY },
  sha256: Sha256,
  uriEscapePath: false,
  applyChecksum: false,
});

/** Whether the request's Authorization is what AWS's signer makes of the same request. */
async function signatureMatches(req: IncomingMessage, port: number): Promise<boolean> {
  const auth = req.headers.authorization ?? "";
  const signedNames = /SignedHeaders=([^,]+)/.exec(auth)?.[1]?.split(";") ?? [];
  const amzDate = req.headers["x-amz-date"];
  if (!signedNames.length || typeof amzDate !== "string") return false;
  const url = new URL(req.url ?? "/", `http://127.0.0.1:${port}`);
  const headers: Record<string, string> = {};
  for (const name of signedNames) headers[name] = String(req.headers[name] ?? "");
  const query: Record<string, string> = {};
  for (const [k, v] of url.searchParams) query[k] = v;
  const date = new Date(
    `${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:` +
      `${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`,
  );
  const signed = await signer.sign(
    {
      method: req.method ?? "GET",
      protocol: "http:",
      hostname: url.hostname,
      port,
      path: url.pathname,
      query,
      headers,
    },
    { signingDate: date, unsignableHeaders: new Set(), signableHeaders: new Set(signedNames) },
  );
  return signed.headers.authorization === auth || signed.headers.Authorization === auth;
}

export async function startS3(): Promise<{ endpoint: string; controlUrl: string; stop(): Promise<void> }> {
  const directory = await mkdtemp(path.join(tmpdir(), "zv-s3-"));
  const s3 = new S3rver({
    address: "127.0.0.1",
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: S3_BUCKET, configs: [] }],
    vhostBuckets: false,
  });
  const inner = (await s3.run()) as AddressInfo;
  // Where s3rver keeps the parts of each open multipart upload, a folder per upload id.
  const uploadsDir = path.join(directory, S3_BUCKET, "._S3rver_uploads");
  // GETs of each object (by its path below the bucket) through the front.
  const reads = new Map<string, number>();
  // GETs still to fail, by the same path.
  const failReads = new Map<string, number>();

  const front = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const port = (front.address() as AddressInfo).port;
      if (!(await signatureMatches(req, port))) {
        req.resume();
        res
          .writeHead(403, { "content-type": "application/xml" })
          .end(
            "<Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does " +
              "not match the signature you provided.</Message></Error>",
          );
        return;
      }
      const asked = new URL(req.url ?? "/", "http://front");
      const uploadId = asked.searchParams.get("uploadId");
      if (req.method === "GET") {
        const key = decodeURIComponent(asked.pathname.slice(S3_BUCKET.length + 2));
        reads.set(key, (reads.get(key) ?? 0) + 1);
        const failing = failReads.get(key) ?? 0;
        if (failing > 0) {
          failReads.set(key, failing - 1);
          req.resume();
          res
            .writeHead(500, { "content-type": "application/xml" })
            .end("<Error><Code>InternalError</Code><Message>We encountered an internal error.</Message></Error>");
          return;
        }
      }
      if (req.method === "DELETE" && uploadId) {
        const dir = path.join(uploadsDir, path.basename(uploadId));
        const known = await stat(dir).then(
          () => true,
          () => false,
        );
        await rm(dir, { recursive: true, force: true });
        res.writeHead(known ? 204 : 404).end(known ? undefined : "<Error><Code>NoSuchUpload</Code></Error>");
        return;
      }
      const upstream = httpRequest(
        { host: "127.0.0.1", port: inner.port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on("error", () => res.destroy());
      req.pipe(upstream);
    })();
  });
  await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve));
  const endpoint = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
  const client = new AwsClient({
    accessKeyId: S3_ACCESS_KEY,
    secretAccessKey: S3_SECRET_KEY,
    service: "s3",
    region: REGION,
  });
  const objectUrl = (key: string) => `${endpoint}/${S3_BUCKET}/${key.split("/").map(encodeURIComponent).join("/")}`;

  const control = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? "/", "http://control");
      const key = url.searchParams.get("key") ?? "";
      if (req.method === "POST" && url.pathname === "/seed") {
        const body = pattern(0, Number(url.searchParams.get("size")));
        const put = await client.fetch(objectUrl(key), {
          method: "PUT",
          body,
          headers: { "content-type": "application/octet-stream" },
        });
        res
          .writeHead(put.status, { "content-type": "application/json" })
          .end(JSON.stringify({ size: body.length, sha256: createHash("sha256").update(body).digest("hex") }));
        return;
      }
      if (url.pathname === "/digest") {
        const got = await client.fetch(objectUrl(key));
        if (!got.ok || !got.body) return void res.writeHead(got.status).end();
        const hash = createHash("sha256");
        let size = 0;
        for await (const chunk of got.body as unknown as AsyncIterable<Uint8Array>) {
          hash.update(chunk);
          size += chunk.length;
        }
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ size, sha256: hash.digest("hex"), etag: got.headers.get("etag") }));
        return;
      }
      if (req.method === "POST" && url.pathname === "/fail-reads") {
        failReads.set(key, Number(url.searchParams.get("count") ?? 1));
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
        return;
      }
      if (url.pathname === "/reads") {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ reads: reads.get(key) ?? 0 }));
        return;
      }
      if (url.pathname === "/uploads") {
        const open = await readdir(uploadsDir).then(
          (names) => names.length,
          () => 0,
        );
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ open }));
        return;
      }
      res.writeHead(404).end();
    })().catch((err: unknown) => res.writeHead(500).end(String(err)));
  });
  await new Promise<void>((resolve) => control.listen(0, "127.0.0.1", resolve));

  return {
    endpoint,
    controlUrl: `http://127.0.0.1:${(control.address() as AddressInfo).port}`,
    async stop() {
      await new Promise((resolve) => front.close(resolve));
      await new Promise((resolve) => control.close(resolve));
      await s3.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
