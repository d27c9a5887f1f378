/**
 * bins, per docs/kinds.md and issue 13: every request at the address or below it captured whole (method,
 * path, query, headers, raw bytes, client address, timing), answered as configured; captures
 * listed newest first, fetched, their raw bodies downloaded; a view link for people (its page is
 * opened in Chromium by test/node/pages.test.ts).
 */
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { bins } from "../../src/kinds/address/bins";
import { INLINE_PUBLIC_BODY_BYTES } from "../../src/kind/public-face";
import { sha256Hex, toBase64 } from "../../src/bytes";
import {
  ORIGIN,
  balanceOf,
  buyCredits,
  call,
  createResource,
  json,
  managed,
  opsOn,
  publicUrl,
  r2Keys,
} from "../harness";

async function bin(body: Record<string, unknown> = {}) {
  const { token } = await buyCredits(1);
  const created = await createResource("bins", token, body);
  const url = publicUrl(created.record);
  return { ...created, token, url, ...opsOn(bins, created.id, created.mgmt, token) };
}

const bytesOf = async (url: string | null) => {
  expect(url, "a link").toMatch(/^https:/);
  const res = await call("GET", url!.slice(ORIGIN.length));
  expect(res.status).toBe(200);
  return { res, bytes: new Uint8Array(await res.arrayBuffer()) };
};

describe("bins", () => {
  it("captures every request whole, lists them newest first; a capture's raw body downloads byte-exact", async () => {
    const b = await bin();
    const binary = new Uint8Array(1000).map((_, i) => (i * 13) & 0xff);
    const first = await SELF.fetch(`${b.url}/stripe/events?x=1&x=2`, {
      method: "PATCH",
      body: binary,
      headers: {
        "content-type": "application/octet-stream",
        "x-custom": "a, b",
        "cf-connecting-ip": "203.0.113.9",
        connection: "keep-alive",
      },
    });
    expect(first.status).toBe(200);
    expect(await json(first)).toEqual({ received: true, seq: 1 });
    expect((await SELF.fetch(`${b.url}`, { method: "OPTIONS" })).status).toBe(200);
    expect((await SELF.fetch(`${b.url}/a%2Fb/`, { method: "POST", body: "hello" })).status).toBe(200);

    const page = await b.ok("list", "/captures");
    expect(page.items.map((c) => [c.seq, c.method, c.path])).toEqual([
      [3, "POST", "/a%2Fb/"],
      [2, "OPTIONS", ""],
      [1, "PATCH", "/stripe/events"],
    ]);
    expect(page.next_cursor).toBeNull();
    const patch = await b.ok("get_capture", "/captures/1");
    expect(patch).toMatchObject({
      query: [
        ["x", "1"],
        ["x", "2"],
      ],
      client_ip: "203.0.113.9",
      size: 1000,
      sha256: sha256Hex(binary),
      body_base64: toBase64(binary),
      content_type: "application/octet-stream",
    });
    expect(patch.headers["x-custom"]).toBe("a, b");
    expect(patch.headers.connection).toBeUndefined();
    expect(patch.duration_ms).toBeGreaterThanOrEqual(0);
    const raw = await bytesOf(patch.raw_url);
    expect(sha256Hex(raw.bytes)).toBe(sha256Hex(binary));
    expect(raw.res.headers.get("content-type")).toBe("application/octet-stream");
    expect(raw.res.headers.get("content-disposition")).toContain("attachment");
    expect((await b.ok("get_capture", "/captures/2")).raw_url).toBeNull();

    // Pages go back from the newest.
    const one = await b.ok("list", "/captures?limit=2");
    expect(one.items.map((c) => c.seq)).toEqual([3, 2]);
    expect(one.next_cursor).toBe("2");
    expect(await b.ok("list", "/captures?limit=2&before=2")).toMatchObject({ items: [{ seq: 1 }], next_cursor: null });
    expect(await b.reply("GET", "/captures/9")).toMatchObject({ status: 404, body: { code: "not_found" } });
  });

  it("keeps a body past inline size in R2: listed with a link, byte-exact; clear, cancel leave nothing", async () => {
    const b = await bin();
    const big = new Uint8Array(INLINE_PUBLIC_BODY_BYTES * 3).map((_, i) => (i * 7 + (i >> 9)) & 0xff);
    expect((await SELF.fetch(`${b.url}/upload`, { method: "PUT", body: big })).status).toBe(200);
    const [capture] = (await b.ok("list", "/captures")).items;
    expect(capture).toMatchObject({ size: big.length, sha256: sha256Hex(big), body_text: null, body_base64: null });
    expect(sha256Hex((await bytesOf(capture!.body_url)).bytes)).toBe(sha256Hex(big));
    expect(sha256Hex((await bytesOf(capture!.raw_url)).bytes)).toBe(sha256Hex(big));
    expect((await r2Keys(b.id)).length).toBe(1);

    expect(await b.ok("clear", "/captures")).toEqual({ deleted: 1 });
    expect(await r2Keys(b.id)).toEqual([]);
    expect((await b.ok("list", "/captures")).items).toEqual([]);
    // Seqs go on after a clear.
    expect(await json(await SELF.fetch(b.url, { method: "POST", body: "again" }))).toEqual({ received: true, seq: 2 });
    expect((await SELF.fetch(`${b.url}/upload`, { method: "PUT", body: big })).status).toBe(200);
    expect((await call("DELETE", `/v1/resources/${b.id}`, { headers: managed(b.mgmt) })).status).toBe(200);
    expect(await r2Keys(b.id)).toEqual([]);
  });

  it("answers as set (status, type, body, headers, delay), never with our origin's powers; it can change", async () => {
    const b = await bin({
      response: {
        status: 201,
        content_type: "text/html; charset=utf-8",
        body: "<script>alert(1)</script>",
        headers: { "x-bin": "yes", "cache-control": "max-age=5" },
      },
    });
    expect(b.record.config).toMatchObject({ response: { status: 201, delay_ms: 0 } });
    const res = await SELF.fetch(b.url, { method: "POST", body: "{}" });
    expect(res.status).toBe(201);
    expect(await res.text()).toBe("<script>alert(1)</script>");
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("x-bin")).toBe("yes");
    expect(res.headers.get("cache-control")).toBe("max-age=5");
    expect(res.headers.get("content-security-policy")).toBe("sandbox");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");

    const slow = {
      status: 503,
      content_type: "text/plain; charset=utf-8",
      body: "later",
      headers: { "retry-after": "30" },
      delay_ms: 400,
    };
    expect(await b.ok("set_response", "/response", slow)).toEqual(slow);
    const started = Date.now();
    const delayed = await SELF.fetch(`${b.url}/x`, { method: "GET" });
    expect(delayed.status).toBe(503);
    expect(delayed.headers.get("retry-after")).toBe("30");
    expect(await delayed.text()).toBe("later");
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    // The capture is stored before the answer waits.
    expect((await b.ok("info", "")).captures).toBe(2);
    expect((await b.ok("info", "")).response).toEqual(slow);
  });

  it("refuses a bad answer configuration with 422, uncharged", async () => {
    const b = await bin();
    const before = (await balanceOf(b.token)).balance_usd;
    for (const response of [
      { headers: { "set-cookie": "a=b" } },
      { headers: { "content-security-policy": "default-src *" } },
      { headers: { "x-a": "one\r\ntwo" } },
      { headers: { "bad name": "x" } },
      { status: 700 },
      { status: 101 },
      { delay_ms: 10_001 },
      { content_type: "text/plain\u0000" },
      { body: "x".repeat(64 * 1024 + 1) },
      { unknown: true },
    ]) {
      expect(await b.reply("PUT", "/response", response), JSON.stringify(response)).toMatchObject({
        status: 422,
        body: { code: "validation_failed" },
      });
      expect(
        (await call("POST", "/v1/bins", { body: { response }, headers: { authorization: `Bearer ${b.token}` } }))
          .status,
      ).toBe(422);
    }
    expect((await balanceOf(b.token)).balance_usd).toBe(before);
  });

  it("shows the captures to whoever has the view link; any other token is captured like any request", async () => {
    const b = await bin();
    await SELF.fetch(`${b.url}/hook`, {
      method: "POST",
      body: "<b>not markup</b>",
      headers: { "content-type": "text/plain" },
    });
    const { view_url } = await b.ok("info", "");
    expect(view_url.startsWith(`${b.url}/_view/`)).toBe(true);
    const page = await SELF.fetch(view_url);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    const html = await page.text();
    expect(html).toContain("&#60;b&#62;not markup&#60;/b&#62;");
    expect(html).not.toContain("<b>not markup");

    const guess = await SELF.fetch(`${b.url}/_view/${"0".repeat(32)}`);
    expect(await json(guess)).toEqual({ received: true, seq: 2 });
    expect((await b.ok("get_capture", "/captures/2")).path).toBe(`/_view/${"0".repeat(32)}`);
    // A right token with a capture that is not there: 404, not a capture.
    expect((await SELF.fetch(`${view_url}/99/body`)).status).toBe(404);
    expect((await b.ok("info", "")).captures).toBe(2);
  });

  it("captures every method the runtime passes on (WebDAV's and a CDN's too), as webhook.site does", async () => {
    const b = await bin();
    const methods = ["PROPFIND", "MKCOL", "PURGE", "REPORT", "SEARCH"];
    for (const [i, method] of methods.entries()) {
      const res = await SELF.fetch(`${b.url}${i % 2 ? "/dav/folder" : ""}`, {
        method,
        body: i === 0 ? '<?xml version="1.0"?><propfind xmlns="DAV:"><allprop/></propfind>' : undefined,
        headers: { depth: "1" },
      });
      expect(res.status, method).toBe(200);
      expect(await json(res)).toEqual({ received: true, seq: i + 1 });
    }
    const page = await b.ok("list", "/captures");
    expect(page.items.map((c) => [c.method, c.path]).reverse()).toEqual(
      methods.map((m, i) => [m, i % 2 ? "/dav/folder" : ""]),
    );
    expect((await b.ok("get_capture", "/captures/1")).body_text).toContain("<allprop/>");
  });

  it("1,000 requests in parallel are each captured exactly once", async () => {
    const b = await bin();
    const answers = await Promise.all(
      Array.from({ length: 1000 }, (_, n) =>
        SELF.fetch(`${b.url}/${n}`, { method: "POST", body: String(n) }).then((r) => json(r)),
      ),
    );
    expect(new Set(answers.map((a) => a.seq)).size).toBe(1000);
    const paths = new Set<string>();
    let before: string | null = null;
    do {
      const page: { items: { path: string }[]; next_cursor: string | null } = await b.ok(
        "list",
        `/captures?limit=100${before ? `&before=${before}` : ""}`,
      );
      page.items.forEach((c) => paths.add(c.path));
      before = page.next_cursor;
    } while (before);
    expect(paths.size).toBe(1000);
  });
});
