/**
 * A local webhook receiver for tests (runs in Node, reached by workerd on 127.0.0.1). It records every request with its
 * headers and raw body; the path says how to answer:
 *   /ok/<name>             200
 *   /fail/<n>/<name> 500 for the first n requests, then 200 /abort/<name> 500 with `webhook-delivery: abort`
 *   /down/<name> 500, always /flaky/<name> 500 the first time a webhook-id arrives, 200 when it comes again (half its
 *   requests fail) /slow/<ms>/<name> 200 after <ms> milliseconds /content/<name> what PUT /_content/<name> stored
 *   (status from its x-status, its content-type, and the headers its x-headers gives as JSON) /doh/<name> a
 *   DNS-over-HTTPS resolver answering from the record set stored at <name> (doh.ts) /rdap/<name>/domain/<domain> an
 *   RDAP server answering what is stored at <name> (application/rdap+json; 404 when nothing is) /redirect/<name> 302 to
 *   /content/<name> /chunked/<name> the same as /content/<name>, but without Content-Length (chunked, 64 KiB writes)
 *   /gzip/<name> the same as /content/<name>, gzip-compressed (Content-Encoding: gzip) /ranged/<size>/<name> <size>
 *   bytes of the test pattern (pattern.ts), Range honoured (206); while PUT /_fail/<name> (body: an offset) is in
 *   force, a range starting at or past that offset answers 500 (DELETE /_fail/<name> lifts it) /files/pixel.png a small
 *   blank PNG, as any web server serves an image (the OCR example's URL) /location/<name>?to=<url> 302 to <url> (a
 *   redirect hop the test chooses) /upstream/<name> 200 "upstream says hi" with a cookie and hop-by-hop headers (what a
 *   proxy must drop) /echo/<name>/<any…> 200 JSON of what arrived: method, url, the client's address, headers, body
 *   size and sha256, the body as text when small (what a proxy passed on); logged under <name>, whatever follows
 *   /provider/<name>/<host>/<any…> 200 JSON as the notify provider at <host> answers a message it accepts, or one it
 *   refuses with a 200 (`ok: false`, `status: 0`) when "zv-refuse" is in the path or body; logged under <name> GET
 *   /_log/<name> returns what arrived for <name>: each request's body as UTF-8 text and, byte-exact, as base64 (`raw`).
 */
import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { pattern } from "./pattern";
import { answerDoh, type RecordSet } from "./doh";

const PIXEL_PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAACAAAAAgCAAAAABWESUoAAAAFklEQVR42mP4TwAwjCoYVTCqYKQqAAA/aPwuqUTQyAAAAABJRU5ErkJggg==",
  "base64",
);

/**
 * What notify's providers answer 200 with: most accept with one of these fields (Slack and Telegram
 * `ok`, Pushover `status`, DingTalk `errcode`, Lark `code` …); a few say it their own way.
 */
const PROVIDER_ACCEPTS = {
  ok: true,
  status: 1,
  success: true,
  result: true,
  code: 0,
  errcode: 0,
  messages: [{ status: "0" }],
  id: "msg-1",
};
const PROVIDER_REFUSES = {
  ok: false,
  status: 0,
  success: false,
  result: false,
  code: -1,
  errcode: -1,
  error: "refused (test)",
};
const PROVIDER_OWN_ANSWERS: Record<string, Record<string, unknown>> = {
  "api.simplepush.io": { status: "OK" },
  "www.pushplus.plus": { code: 200 },
  "wxpusher.zjiecode.com": { code: 1000 },
};

export interface Received {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  /** The body's exact bytes, base64. */
  raw: string;
  status: number;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Resolves once `res` can take more bytes, or its client has gone. */
function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done).off("close", done);
      resolve();
    };
    res.on("drain", done).on("close", done);
  });
}

export async function startReceiver(): Promise<{ url: string; stop(): Promise<void> }> {
  const log = new Map<string, Received[]>();
  const contents = new Map<string, { status: number; type: string; headers: Record<string, string>; body: Buffer }>();
  const failFrom = new Map<string, number>();
  const server = createServer(async (req, res) => {
    const parts = (req.url ?? "/").split("?")[0]!.split("/").filter(Boolean);
    if (req.method === "GET" && parts[0] === "_log") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(log.get(parts[1] ?? "") ?? []));
      return;
    }
    if (req.method === "PUT" && parts[0] === "_content") {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const headers = JSON.parse(String(req.headers["x-headers"] ?? "{}")) as Record<string, string>;
      contents.set(parts[1] ?? "", {
        status: Number(req.headers["x-status"] ?? 200),
        type: req.headers["content-type"] ?? "application/octet-stream",
        headers,
        body: Buffer.concat(chunks),
      });
      res.writeHead(204).end();
      return;
    }
    if (parts[0] === "_fail") {
      if (req.method === "DELETE") failFrom.delete(parts[1] ?? "");
      else failFrom.set(parts[1] ?? "", Number((await readBody(req)).toString()));
      res.writeHead(204).end();
      return;
    }
    const body = await readBody(req);
    const name =
      (["echo", "provider", "doh", "rdap"].includes(parts[0] ?? "") ? parts[1] : parts[parts.length - 1]) ?? "";
    const seen = log.get(name) ?? [];
    let status = 200;
    const headers: Record<string, string> = { "content-type": "text/plain" };
    if (parts[0] === "fail" && seen.length < Number(parts[1])) status = 500;
    if (parts[0] === "down") status = 500;
    if (parts[0] === "flaky" && !seen.some((r) => r.headers["webhook-id"] === req.headers["webhook-id"])) status = 500;
    if (parts[0] === "abort") {
      status = 500;
      headers["webhook-delivery"] = "abort";
    }
    if (parts[0] === "slow") await new Promise((resolve) => setTimeout(resolve, Number(parts[1])));
    const flat = Object.fromEntries(
      Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(", ") : (v ?? "")]),
    );
    log.set(name, [
      ...seen,
      {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: flat,
        body: body.toString("utf8"),
        raw: body.toString("base64"),
        status,
      },
    ]);
    const content = contents.get(name);
    if (parts[0] === "files" && parts[1] === "pixel.png") {
      res.writeHead(200, { "content-type": "image/png", "content-length": PIXEL_PNG.length }).end(PIXEL_PNG);
      return;
    }
    if (parts[0] === "ranged") {
      const size = Number(parts[1]);
      const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? "");
      const start = range ? Number(range[1]) : 0;
      const end = range && range[2] ? Math.min(Number(range[2]) + 1, size) : size;
      if (start >= (failFrom.get(name) ?? Infinity)) return void res.writeHead(500).end("failing on purpose");
      const headers: Record<string, string | number> = {
        "content-type": "application/octet-stream",
        "accept-ranges": "bytes",
        "content-length": end - start,
      };
      if (range) headers["content-range"] = `bytes ${start}-${end - 1}/${size}`;
      res
        .writeHead(range ? 206 : 200, headers)
        .end(req.method === "HEAD" ? undefined : Buffer.from(pattern(start, end)));
      return;
    }
    if (parts[0] === "content" && content) {
      res
        .writeHead(content.status, {
          ...content.headers,
          "content-type": content.type,
          "content-length": content.body.length,
        })
        .end(req.method === "HEAD" ? undefined : content.body);
      return;
    }
    if (parts[0] === "doh" && content) {
      const answer = answerDoh(
        JSON.parse(content.body.toString()) as RecordSet,
        new URL(req.url ?? "/", "http://x"),
        req.method ?? "GET",
        body,
      );
      res.writeHead(answer.status, { "content-type": answer.type }).end(answer.body);
      return;
    }
    if (parts[0] === "rdap") {
      if (!content)
        return void res
          .writeHead(404, { "content-type": "application/rdap+json" })
          .end(JSON.stringify({ errorCode: 404, title: "Not Found" }));
      res.writeHead(200, { "content-type": "application/rdap+json" }).end(content.body);
      return;
    }
    if (parts[0] === "gzip" && content) {
      const packed = gzipSync(content.body);
      res
        .writeHead(content.status, {
          "content-type": content.type,
          "content-encoding": "gzip",
          "content-length": packed.length,
        })
        .end(packed);
      return;
    }
    if (parts[0] === "chunked" && content) {
      res.writeHead(content.status, { "content-type": content.type });
      for (let at = 0; at < content.body.length && !res.destroyed; at += 65536) {
        // Wait for the socket to drain (or the client to hang up), so the body really streams.
        if (!res.write(content.body.subarray(at, at + 65536))) await drainedOrClosed(res);
      }
      res.end();
      return;
    }
    if (parts[0] === "provider") {
      const refused = (req.url ?? "").includes("zv-refuse") || body.includes("zv-refuse");
      const answer = refused ? PROVIDER_REFUSES : { ...PROVIDER_ACCEPTS, ...PROVIDER_OWN_ANSWERS[parts[2] ?? ""] };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
      return;
    }
    if (parts[0] === "echo") {
      const echo = {
        method: req.method,
        url: req.url,
        remote_address: req.socket.remoteAddress,
        headers: flat,
        size: body.length,
        sha256: createHash("sha256").update(body).digest("hex"),
        body: body.length <= 65536 ? body.toString("utf8") : null,
      };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(echo));
      return;
    }
    if (parts[0] === "upstream") {
      res
        .writeHead(200, {
          "content-type": "text/html",
          "set-cookie": "session=upstream",
          "x-upstream": "yes",
          "keep-alive": "timeout=5",
          connection: "keep-alive",
        })
        .end("upstream says hi");
      return;
    }
    if (parts[0] === "location") {
      res.writeHead(302, { location: new URL(req.url ?? "/", "http://x").searchParams.get("to") ?? "/" }).end();
      return;
    }
    if (parts[0] === "redirect") {
      res.writeHead(302, { location: `/content/${name}` }).end();
      return;
    }
    res.writeHead(status, headers).end(status === 200 ? "ok" : "nope");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, stop: () => new Promise((resolve) => server.close(() => resolve())) };
}
