/**
 * stable addresses, per docs/kinds.md and issue 13: a permanent public URL proxied (both ways,
 * streaming, up to 10 MiB) or redirected (307) to a target the agent changes; while there is no
 * target, requests are buffered (202) and replayed to the next target in arrival order, once
 * each, signed, through the delivery pipeline. Tested against the local receiver.
 */
import { SELF, env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { stable } from "../../src/kinds/address/stable";
import { DISPATCH_GRACE_MS } from "../../src/delivery/outbox-policy";
import { MAX_BUFFERED } from "../../src/kinds/address/stable/schema";
import {
  advance,
  balanceOf,
  buyCredits,
  call,
  createResource,
  opsOn,
  problemOf,
  publicUrl,
  r2Keys,
  received,
  serveContent,
  stubOf,
  verifierOf,
  type Received,
} from "../harness";

const receiver = env.TEST_RECEIVER_URL;
const unique = () => crypto.randomUUID().slice(0, 8);
const MiB = 1024 * 1024;

async function address(body: Record<string, unknown>) {
  const { token } = await buyCredits(1);
  const created = await createResource("stable", token, body);
  return { ...created, token, url: publicUrl(created.record), ...opsOn(stable, created.id, created.mgmt, token) };
}

const arrivedFor = async (name: string) => (await (await fetch(`${receiver}/_log/${name}`)).json()) as Received[];

const hex = async (bytes: Uint8Array) =>
  [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("");

/** Bytes that are not text, different at every offset. */
const binary = (size: number) => new Uint8Array(size).map((_, i) => (i * 31 + (i >> 8)) & 255);

describe("stable", () => {
  it("proxies any method, sub-path and query to the target and streams the answer back", async () => {
    const name = unique();
    const s = await address({ target_url: `${receiver}/echo/${name}` });
    const res = await SELF.fetch(`${s.url}/orders/a%20b?x=1&x=2`, {
      method: "PATCH",
      body: '{"n":1}',
      headers: {
        "content-type": "application/json",
        "x-custom": "kept",
        "cf-connecting-ip": "203.0.113.9",
        cookie: "ours=1",
      },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-security-policy")).toBe("sandbox");
    const echo = (await res.json()) as { method: string; url: string; headers: Record<string, string>; body: string };
    expect(echo).toMatchObject({ method: "PATCH", url: `/echo/${name}/orders/a%20b?x=1&x=2`, body: '{"n":1}' });
    expect(echo.headers).toMatchObject({
      "x-custom": "kept",
      "content-type": "application/json",
      "x-forwarded-for": "203.0.113.9",
    });
    expect(echo.headers.cookie).toBeUndefined();

    // 10 MiB up, byte-exact; one byte more is refused before anything is sent.
    const big = binary(10 * MiB);
    const up = (await (await SELF.fetch(`${s.url}/upload`, { method: "PUT", body: big })).json()) as {
      size: number;
      sha256: string;
    };
    expect(up).toEqual(expect.objectContaining({ size: 10 * MiB, sha256: await hex(big) }));
    await problemOf(await SELF.fetch(`${s.url}/upload`, { method: "PUT", body: binary(10 * MiB + 1) }), 413);
    expect((await received(name, 2)).length).toBe(2);

    // 10 MiB down, byte-exact, with forward_path off.
    const down = binary(10 * MiB).reverse();
    const content = await serveContent(name, down, { type: "application/octet-stream" });
    await s.ok("set_target", "/target", { target_url: content, forward_path: false });
    const got = await SELF.fetch(`${s.url}/ignored/path?q=1`);
    expect(got.status).toBe(200);
    expect(await hex(new Uint8Array(await got.arrayBuffer()))).toBe(await hex(down));
    expect(await s.ok("info", "")).toMatchObject({
      proxied: 3,
      redirected: 0,
      target_url: content,
      forward_path: false,
    });
  });

  it("redirects with 307 in redirect mode, path and query kept", async () => {
    const s = await address({ target_url: "https://example.com/agent/", mode: "redirect" });
    const res = await SELF.fetch(`${s.url}/hooks/1?a=b`, { method: "POST", body: "x", redirect: "manual" });
    expect(res.status).toBe(307);
    expect(res.headers.get("location")).toBe("https://example.com/agent/hooks/1?a=b");
    const root = await SELF.fetch(s.url, { redirect: "manual" });
    expect(root.headers.get("location")).toBe("https://example.com/agent/");
    expect(await s.ok("info", "")).toMatchObject({ redirected: 2, mode: "redirect" });
  });

  it(
    "passes the query on byte for byte, as nginx's proxy_pass does: proxied, redirected and replayed, " +
      "the target's own query kept as written",
    async () => {
      const name = unique();
      const raw = "q=a%20b&flag&t=~x&plus=1+2&e=";
      const s = await address({ target_url: `${receiver}/echo/${name}?sig=a%20b&v=1` });
      const proxied = (await (await SELF.fetch(`${s.url}/hook?${raw}`, { method: "POST", body: "x" })).json()) as {
        url: string;
      };
      expect(proxied.url).toBe(`/echo/${name}/hook?sig=a%20b&v=1&${raw}`);

      await s.ok("set_target", "/target", { target_url: "https://example.com/in?sig=a%20b", mode: "redirect" });
      const redirected = await SELF.fetch(`${s.url}/hook?${raw}`, { redirect: "manual" });
      expect(redirected.status).toBe(307);
      expect(redirected.headers.get("location")).toBe(`https://example.com/in/hook?sig=a%20b&${raw}`);

      // Kept while there is no target, and replayed with the query as it came.
      await s.ok("set_target", "/target", { target_url: null });
      expect((await SELF.fetch(`${s.url}/later?${raw}`, { method: "POST", body: "y" })).status).toBe(202);
      await s.ok("set_target", "/target", { target_url: `${receiver}/echo/${name}` });
      const hits = await received(name, 2);
      expect(hits[1]!.path).toBe(`/echo/${name}/later?${raw}`);
    },
  );

  it("buffers while no target is set and replays in arrival order, once each, signed", async () => {
    const name = unique();
    const s = await address({});
    const bin = binary(200 * 1024);
    const sent: [string, RequestInit][] = [
      [
        `${s.url}/a`,
        { method: "POST", body: '{"first":true}', headers: { "content-type": "application/json", "x-n": "1" } },
      ],
      [`${s.url}/b?k=v&k=w`, { method: "GET" }],
      [`${s.url}/c`, { method: "PUT", body: bin, headers: { "content-type": "application/octet-stream" } }],
      [`${s.url}/d`, { method: "DELETE" }],
    ];
    for (const [i, [url, init]] of sent.entries()) {
      const res = await SELF.fetch(url, init); // one after another: the order is the arrival order
      expect(res.status).toBe(202);
      expect(await res.json()).toEqual({ buffered: true, seq: i + 1 });
    }
    await problemOf(await SELF.fetch(s.url, { method: "OPTIONS" }), 409);
    expect(await s.ok("buffer", "/buffer?status=waiting")).toMatchObject({
      items: [
        { seq: 1, method: "POST", path: "/a" },
        { seq: 2, path: "/b?k=v&k=w" },
        { seq: 3, size: 200 * 1024 },
        { seq: 4, method: "DELETE" },
      ],
    });
    expect((await s.ok("info", "")).buffered).toMatchObject({ waiting: 4, bytes: 14 + 200 * 1024 });

    const after = await s.ok("set_target", "/target", { target_url: `${receiver}/echo/${name}` });
    expect(after.target_url).toBe(`${receiver}/echo/${name}`);
    const hits = await received(name, 4);
    expect(hits.map((h) => h.path)).toEqual([
      `/echo/${name}/a`,
      `/echo/${name}/b?k=v&k=w`,
      `/echo/${name}/c`,
      `/echo/${name}/d`,
    ]);
    expect(verifierOf(s.record).verify(hits[0]!.body, hits[0]!.headers)).toEqual({ first: true });
    expect(hits[0]!.headers["x-n"]).toBe("1");
    expect(Buffer.from(hits[2]!.raw, "base64").equals(Buffer.from(bin))).toBe(true);

    // Settled, in order, and never again; a request now goes straight through.
    let buffered: { delivered: number } | undefined;
    for (let i = 0; i < 50 && buffered?.delivered !== 4; i++) {
      await new Promise((r) => setTimeout(r, 100));
      buffered = (await s.ok("info", "")).buffered;
    }
    expect(buffered).toMatchObject({ waiting: 0, replaying: 0, delivered: 4, dead: 0 });
    expect((await SELF.fetch(`${s.url}/live`, { method: "POST", body: "now" })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    const log = (await (await fetch(`${receiver}/_log/${name}`)).json()) as Received[];
    expect(log.map((h) => h.path)).toEqual([...hits.map((h) => h.path), `/echo/${name}/live`]);

    // Back to no target: buffered again; clear_buffer drops what waits.
    await s.ok("set_target", "/target", { target_url: null });
    expect((await SELF.fetch(`${s.url}/e`, { method: "POST", body: "later" })).status).toBe(202);
    expect(await s.ok("clear_buffer", "/buffer")).toEqual({ cleared: 1 });
    expect((await s.ok("info", "")).buffered).toMatchObject({ waiting: 0, delivered: 4 });
  });

  it("a replay whose dispatch the process never made is sent by the alarm; the chain goes on in order", async () => {
    const name = unique();
    const s = await address({});
    for (const n of [1, 2, 3])
      expect((await SELF.fetch(`${s.url}/${n}`, { method: "POST", body: String(n) })).status).toBe(202);
    // The dispatch after set_target's commit, and the one after the first replay settles, never happen.
    await stubOf(s.id).injectFaults({ skipDispatches: 2 });
    await s.ok("set_target", "/target", { target_url: `${receiver}/echo/${name}` });
    await new Promise((r) => setTimeout(r, 300));
    expect(await arrivedFor(name)).toEqual([]);
    for (let i = 0; i < 20 && (await arrivedFor(name)).length < 3; i++) {
      await advance(s.id, DISPATCH_GRACE_MS);
      await new Promise((r) => setTimeout(r, 300));
    }
    expect((await arrivedFor(name)).map((h) => h.body)).toEqual(["1", "2", "3"]);
  });

  it("answers 502 when the target cannot be reached, and 507 once the buffer is full, keeping nothing", async () => {
    const s = await address({ target_url: "http://127.0.0.1:9/closed" });
    await problemOf(await SELF.fetch(`${s.url}/x`, { method: "POST", body: "lost?" }), 502);
    await s.ok("set_target", "/target", { target_url: null });
    expect((await SELF.fetch(s.url, { method: "POST", body: "kept" })).status).toBe(202);
    // Fill the buffer to its limit as a thousand requests would.
    await runInDurableObject(stubOf(s.id), (_o, state) => {
      for (let i = 1; i < MAX_BUFFERED; i++)
        state.storage.sql.exec(
          "INSERT INTO stable_buffer (received_at, method, path, query, headers, size, status) VALUES (0, " +
            "'POST', '', '', '{}', 0, 'waiting')",
        );
    });
    // A binary body is stored in R2 on its way to the buffer: the refusal deletes it again.
    const full = await SELF.fetch(s.url, { method: "POST", body: new Uint8Array([0xff, 0xfe, 0, 1]) });
    expect((await problemOf(full, 507)).code).toBe("storage_full");
    expect((await s.ok("info", "")).buffered.waiting).toBe(MAX_BUFFERED);
    expect(await r2Keys(s.id)).toEqual([]);
  });

  it("refuses bad targets and options with 422, uncharged", async () => {
    const { token } = await buyCredits(1);
    const before = (await balanceOf(token)).balance_usd;
    for (const body of [
      { target_url: "ftp://example.com/" },
      { target_url: "https://example.com/", mode: "tunnel" },
      { target_url: "https://exa mple.com/" },
      { forward_path: "yes" },
      { target_url: "https://example.com/", extra: 1 },
    ]) {
      const res = await call("POST", "/v1/stable", { body, headers: { authorization: `Bearer ${token}` } });
      expect(res.status, JSON.stringify(body)).toBe(422);
    }
    expect((await balanceOf(token)).balance_usd).toBe(before);
    const s = await address({});
    const after = (await balanceOf(s.token)).balance_usd;
    expect(await s.reply("PUT", "/target", { target_url: "javascript:alert(1)" })).toMatchObject({ status: 422 });
    expect(await s.reply("PUT", "/target", {})).toMatchObject({ status: 422 });
    expect((await balanceOf(s.token)).balance_usd).toBe(after);
  });
});
