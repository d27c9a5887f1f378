/**
 * What the public-face contract hands a kind and sends back, shown through a fixture face
 * that answers with what it was given. The face is put on the counters kind for this file
 * (kinds and tests share an isolate, as in migrations.test.ts), so the real router, the real
 * object and real R2 carry every request: any method, the exact sub-path, repeated query
 * keys, headers without hop-by-hop ones, the client address, raw bytes inline or (large)
 * stored in R2 first, and each kind of answer with its headers.
 */
import { SELF, env } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findKind } from "../../src/resources/registry";
import { AppError } from "../../src/http/errors";
import {
  definePublicFace,
  INLINE_PUBLIC_BODY_BYTES,
  MAX_PUBLIC_BODY_BYTES,
  type PublicAnswer,
  type PublicRequest,
  type StoredPublicBody,
} from "../../src/kind/public-face";
import { fromBase64, sha256Hex, toBase64 } from "../../src/bytes";
import { buyCredits, createResource, json, publicUrl, r2Keys, received } from "../harness";

const counters = findKind("counters")!;

const echo = (request: PublicRequest) => ({
  ...request,
  body:
    request.body === null
      ? null
      : request.body instanceof Uint8Array
        ? { inline: toBase64(request.body) }
        : request.body,
});

const answers: Record<string, PublicAnswer> = {
  html: { type: "html", body: `<!doctype html><p>hi</p><script nonce="{{nonce}}">1</script>` },
  text: { type: "text", status: 201, body: "plain", headers: { "x-kind": "fixture" } },
  bytes: { type: "bytes", body: new Uint8Array([0, 1, 2, 255]), contentType: "application/octet-stream" },
  redirect: { type: "redirect", location: "https://example.com/next", status: 303 },
  empty: { type: "empty" },
};

const fixture = definePublicFace({
  routes: [
    {
      name: "echo",
      path: "/echo/{name}",
      methods: ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
      maxBodyBytes: MAX_PUBLIC_BODY_BYTES,
      summary: "fixture",
    },
    { name: "refuse", path: "/refuse", methods: ["POST"], maxBodyBytes: MAX_PUBLIC_BODY_BYTES, summary: "fixture" },
    { name: "answer", path: "/answer/{type}", methods: ["GET"], summary: "fixture" },
    {
      name: "proxy",
      path: "/proxy/{path}",
      methods: ["GET", "POST"],
      streamsBody: true,
      maxBodyBytes: MAX_PUBLIC_BODY_BYTES,
      summary: "fixture",
    },
  ],
  handle(store, _config, request): PublicAnswer {
    if (request.route === "refuse") throw new AppError("conflict", "refused after the body was stored");
    if (request.route === "answer") return answers[request.params.type!]!;
    if (request.route === "proxy") {
      const target =
        request.params.path === "closed"
          ? "http://127.0.0.1:1"
          : `${env.TEST_RECEIVER_URL}/${request.params.path!.replace(":", "/")}`;
      return {
        type: "upstream",
        url: target,
        requestHeaders: { "x-via": "fixture", "content-type": "application/octet-stream" },
      };
    }
    // The kind owns a stored body now: this one lets it go when asked to.
    if (request.body && !(request.body instanceof Uint8Array) && request.query.some(([k]) => k === "drop"))
      store.dropObjects([request.body.key]);
    return { type: "json", body: echo(request) as never };
  },
});

let url = "";
let id = "";

beforeAll(async () => {
  counters.public = fixture;
  const { token } = await buyCredits(1);
  const created = await createResource("counters", token);
  url = publicUrl(created.record);
  id = created.id;
});
afterAll(() => {
  delete counters.public;
});

const publicBodies = async () => (await r2Keys(id)).filter((k) => k.includes("/public-bodies/"));

describe("what a kind is handed", () => {
  it("any method, exact sub-path, repeated query keys, headers but hop-by-hop ones, the client address", async () => {
    const before = Date.now();
    for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]) {
      const res = await SELF.fetch(`${url}/echo/a%20b/?tag=1&tag=2&empty=&x=%E2%9C%93`, {
        method,
        headers: {
          "cf-connecting-ip": "203.0.113.7",
          "x-custom": "kept",
          connection: "keep-alive, x-hop",
          "x-hop": "dropped",
          "keep-alive": "timeout=5",
          te: "trailers",
        },
      });
      expect(res.status, method).toBe(200);
      const seen = await json<ReturnType<typeof echo>>(res);
      expect(seen).toMatchObject({
        method,
        route: "echo",
        params: { name: "a b" },
        path: "/echo/a%20b/",
        query: [
          ["tag", "1"],
          ["tag", "2"],
          ["empty", ""],
          ["x", "✓"],
        ],
        clientIp: "203.0.113.7",
        body: null,
      });
      expect(seen.headers["x-custom"]).toBe("kept");
      for (const hop of ["connection", "x-hop", "keep-alive", "te"]) expect(seen.headers[hop], hop).toBeUndefined();
      expect(seen.receivedAt).toBeGreaterThanOrEqual(before);
    }
  });

  it("a small body arrives as its exact bytes", async () => {
    const bytes = new Uint8Array(256).map((_, i) => i);
    const seen = await json(await SELF.fetch(`${url}/echo/bin`, { method: "POST", body: bytes }));
    expect(seen.body).toEqual({ inline: toBase64(bytes) });
  });

  it("a large body goes to R2 first: the object gets its key, size and SHA-256, and the kind owns it", async () => {
    const bytes = new Uint8Array(INLINE_PUBLIC_BODY_BYTES * 3 + 5).map((_, i) => (i * 31) & 0xff);
    const seen = await json<{ body: StoredPublicBody }>(
      await SELF.fetch(`${url}/echo/big`, { method: "PUT", body: bytes }),
    );
    expect(seen.body).toEqual({
      key: expect.stringMatching(new RegExp(`^${id}/public-bodies/`)),
      size: bytes.length,
      sha256: sha256Hex(bytes),
    });
    const stored = await env.BUCKET.get(seen.body.key);
    expect(new Uint8Array(await stored!.arrayBuffer())).toEqual(bytes);
    // A kind that lets it go: deleted after the commit.
    const dropped = await json<{ body: StoredPublicBody }>(
      await SELF.fetch(`${url}/echo/big?drop=1`, { method: "PUT", body: bytes }),
    );
    expect(await publicBodies()).not.toContain(dropped.body.key);
    expect(await publicBodies()).toContain(seen.body.key);
  });

  it("a refused request leaves no stored body behind; one over the limit is 413 and stores nothing", async () => {
    const before = await publicBodies();
    const refused = await SELF.fetch(`${url}/refuse`, {
      method: "POST",
      body: new Uint8Array(INLINE_PUBLIC_BODY_BYTES + 1),
    });
    expect(refused.status).toBe(409);
    const over = await SELF.fetch(`${url}/echo/x`, { method: "POST", body: new Uint8Array(MAX_PUBLIC_BODY_BYTES + 1) });
    expect(over.status).toBe(413);
    expect(await publicBodies()).toEqual(before);
  });
});

describe("what a kind answers", () => {
  const get = (type: string) => SELF.fetch(`${url}/answer/${type}`, { redirect: "manual" });

  it("HTML with its nonce in a strict policy; text and bytes with their types; a redirect; nothing", async () => {
    const html = await get("html");
    const nonce = /'nonce-([^']+)'/.exec(html.headers.get("content-security-policy")!)![1]!;
    expect(await html.text()).toBe(`<!doctype html><p>hi</p><script nonce="${nonce}">1</script>`);
    expect(html.headers.get("x-frame-options")).toBe("DENY");

    const text = await get("text");
    expect([text.status, text.headers.get("content-type"), text.headers.get("x-kind"), await text.text()]).toEqual([
      201,
      "text/plain; charset=utf-8",
      "fixture",
      "plain",
    ]);

    const bytes = await get("bytes");
    expect(bytes.headers.get("content-type")).toBe("application/octet-stream");
    expect(new Uint8Array(await bytes.arrayBuffer())).toEqual(new Uint8Array([0, 1, 2, 255]));
    expect(bytes.headers.get("x-content-type-options")).toBe("nosniff");

    const redirect = await get("redirect");
    expect([redirect.status, redirect.headers.get("location")]).toEqual([303, "https://example.com/next"]);

    const empty = await get("empty");
    expect([empty.status, await empty.text()]).toEqual([204, ""]);
    const head = await SELF.fetch(`${url}/answer/text`, { method: "HEAD" });
    expect([head.status, await head.text()]).toEqual([201, ""]);
  });
});

describe("a proxied upstream", () => {
  it("streams the body upstream and its answer back, without cookies or hop-by-hop headers, sandboxed", async () => {
    const name = crypto.randomUUID().slice(0, 8);
    const bytes = new Uint8Array(INLINE_PUBLIC_BODY_BYTES * 4).map((_, i) => (i * 7) & 0xff);
    const before = await publicBodies();
    const res = await SELF.fetch(`${url}/proxy/upstream:${name}`, { method: "POST", body: bytes });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("upstream says hi");
    expect(res.headers.get("x-upstream")).toBe("yes");
    for (const dropped of ["set-cookie", "keep-alive"]) expect(res.headers.get(dropped), dropped).toBeNull();
    expect(res.headers.get("content-security-policy")).toBe("sandbox");
    const [hit] = await received(name, 1);
    expect(fromBase64(hit!.raw)).toEqual(bytes);
    expect(hit!.headers["x-via"]).toBe("fixture");
    // Nothing of it was stored on the way.
    expect(await publicBodies()).toEqual(before);
  });

  it("answers 502 when the upstream cannot be reached", async () => {
    const res = await SELF.fetch(`${url}/proxy/closed`);
    expect(res.status).toBe(502);
    expect((await json(res)).type).toMatch(/upstream_failed/);
  });
});
