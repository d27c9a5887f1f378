/**
 * proxies, per docs/kinds.md and issue 13: an auth-gated reverse proxy in front of a local upstream
 * that echoes what it received. Only callers with the proxy's own credential (bearer or basic,
 * shown once) or from an allowed range reach it; the injected secrets arrive there and appear in
 * no answer (masked even when the upstream echoes them), log, export or storage; a wrong
 * credential gets 401 and reaches nothing; the rate limit answers 429; bodies stream both ways.
 */
import { SELF, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { proxies } from "../../src/kinds/address/proxies";
import {
  balanceOf,
  buyCredits,
  call,
  createResource,
  json,
  managed,
  opsOn,
  problemOf,
  publicUrl,
  r2Keys,
  serveContent,
  storageDump,
  type Received,
} from "../harness";

const receiver = env.TEST_RECEIVER_URL;
const unique = () => crypto.randomUUID().slice(0, 8);
const API_KEY = "sk_live_Zq8Xv3Lm1Np7Rt5W";
const QUERY_KEY = "qk/with spaces&symbols=+";

async function proxy(body: Record<string, unknown>) {
  const { token } = await buyCredits(1);
  const created = await createResource("proxies", token, body);
  const credential = (created.record as { credential?: Record<string, string> }).credential;
  return {
    ...created,
    token,
    credential,
    url: publicUrl(created.record),
    ...opsOn(proxies, created.id, created.mgmt, token),
  };
}

const arrived = async (name: string) => (await (await fetch(`${receiver}/_log/${name}`)).json()) as Received[];

const hex = async (bytes: Uint8Array) =>
  [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("");

/** The log, once the worker has reported every passed request's status. */
async function settledLog(p: Awaited<ReturnType<typeof proxy>>, count: number) {
  for (let i = 0; i < 50; i++) {
    const log = await p.ok("log", `/log?limit=${count}`);
    if (log.items.length >= count && log.items.every((e) => e.status !== null)) return log.items;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the log never settled");
}

describe("proxies", () => {
  it("passes a bearer caller with injected secrets, which no answer, log, export or storage shows", async () => {
    const name = unique();
    const p = await proxy({
      upstream_url: `${receiver}/echo/${name}`,
      inject_headers: { "x-api-key": API_KEY },
      inject_query: { key: QUERY_KEY },
    });
    expect(p.credential).toMatchObject({ type: "bearer", token: expect.stringMatching(/^zvp_/) });
    const authorization = p.credential!.authorization!;

    // Without the credential, or with a wrong one: 401, and nothing reaches the upstream.
    const none = await SELF.fetch(`${p.url}/v1/items`);
    await problemOf(none, 401);
    expect(none.headers.get("www-authenticate")).toBe('Bearer realm="proxy"');
    await problemOf(await SELF.fetch(`${p.url}/v1/items`, { headers: { authorization: `${authorization}x` } }), 401);
    await problemOf(
      await SELF.fetch(p.url, { method: "POST", body: "x", headers: { authorization: "Bearer zvp_guess" } }),
      401,
    );
    expect(await arrived(name)).toEqual([]);

    const res = await SELF.fetch(`${p.url}/v1/items?a=1&key=callers`, {
      method: "POST",
      body: '{"n":1}',
      headers: {
        authorization,
        "content-type": "application/json",
        "x-custom": "kept",
        "cf-connecting-ip": "198.51.100.7",
      },
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    // The upstream echoed the secrets back; the caller sees them masked, lengths kept.
    for (const secret of [API_KEY, QUERY_KEY, encodeURIComponent(QUERY_KEY)]) expect(text).not.toContain(secret);
    const echo = JSON.parse(text) as { method: string; url: string; headers: Record<string, string>; body: string };
    expect(echo.headers["x-api-key"]).toBe("*".repeat(API_KEY.length));
    expect(echo).toMatchObject({ method: "POST", body: '{"n":1}' });
    expect(echo.headers).toMatchObject({ "x-custom": "kept", "x-forwarded-for": "198.51.100.7" });
    // What the upstream really got: the secrets, the caller's query (its `key` replaced), not the proxy's credential.
    const [hit] = await arrived(name);
    expect(hit!.headers["x-api-key"]).toBe(API_KEY);
    expect(hit!.headers.authorization).toBeUndefined();
    const sent = new URL(hit!.path, "http://upstream");
    expect(sent.pathname).toBe(`/echo/${name}/v1/items`);
    expect([...sent.searchParams]).toEqual([
      ["a", "1"],
      ["key", QUERY_KEY],
    ]);

    // A 10 MiB body streams through, byte-exact.
    const big = new Uint8Array(10 * 1024 * 1024).map((_, i) => (i * 7) & 255);
    const up = (await (
      await SELF.fetch(`${p.url}/upload`, { method: "PUT", body: big, headers: { authorization } })
    ).json()) as { size: number; sha256: string };
    expect(up).toMatchObject({ size: big.length, sha256: await hex(big) });

    const log = await settledLog(p, 5);
    expect(log.map((e) => [e.method, e.status, e.via])).toEqual([
      ["PUT", 200, "credential"],
      ["POST", 200, "credential"],
      ["POST", 401, null],
      ["GET", 401, null],
      ["GET", 401, null],
    ]);
    expect(log[1]).toMatchObject({
      path: "/v1/items?a=1&key=callers",
      caller_ip: "198.51.100.7",
      duration_ms: expect.any(Number),
    });
    expect(await p.ok("info", "")).toMatchObject({
      inject_headers: ["x-api-key"],
      inject_query: ["key"],
      passed: 2,
      denied: 3,
      rate_limited: 0,
    });

    const record = await json(await call("GET", `/v1/resources/${p.id}`, { headers: managed(p.mgmt) }));
    const exported = await (await call("GET", `/v1/resources/${p.id}/export`, { headers: managed(p.mgmt) })).text();
    const stored = await storageDump(p.id);
    for (const place of [JSON.stringify(record), exported, stored, JSON.stringify(await r2Keys(p.id))]) {
      for (const secret of [API_KEY, QUERY_KEY, p.credential!.token!]) expect(place).not.toContain(secret);
    }
  });

  it(
    "passes the caller's query on byte for byte (the upstream's own query kept as written), " +
      "the injected parameters after it",
    async () => {
      const name = unique();
      const p = await proxy({
        upstream_url: `${receiver}/echo/${name}?sig=a%20b`,
        auth: "none",
        allow_ips: ["0.0.0.0/0", "::/0"],
        inject_query: { key: QUERY_KEY },
      });
      const raw = "q=a%20b&flag&t=~x&plus=1+2";
      const res = await SELF.fetch(`${p.url}/v1/items?${raw}&key=callers&key=again`, {
        headers: { "cf-connecting-ip": "198.51.100.7" },
      });
      expect(res.status).toBe(200);
      const [hit] = await arrived(name);
      expect(hit!.path).toBe(`/echo/${name}/v1/items?sig=a%20b&${raw}&key=${encodeURIComponent(QUERY_KEY)}`);
      expect(await res.text()).not.toContain(encodeURIComponent(QUERY_KEY));
      const log = await settledLog(p, 1);
      expect(log[0]!.path).toBe(`/v1/items?${raw}&key=callers&key=again`);
    },
  );

  it("masks a secret split across the upstream's chunks, and leaves other bytes alone", async () => {
    const name = unique();
    const body = new Uint8Array(300 * 1024).fill(0x2e);
    const key = new TextEncoder().encode(API_KEY);
    for (const at of [0, 65536 - 5, 131072 - 1, body.length - key.length]) body.set(key, at);
    await serveContent(name, body, { type: "application/octet-stream" });
    const p = await proxy({ upstream_url: `${receiver}/chunked/${name}`, inject_headers: { "x-api-key": API_KEY } });
    const res = await SELF.fetch(p.url, { headers: { authorization: p.credential!.authorization! } });
    const got = new Uint8Array(await res.arrayBuffer());
    expect(got.length).toBe(body.length);
    expect(new TextDecoder().decode(got)).not.toContain(API_KEY);
    const expected = body.slice();
    for (const at of [0, 65536 - 5, 131072 - 1, body.length - key.length]) expected.fill(0x2a, at, at + key.length);
    expect(await hex(got)).toBe(await hex(expected));
  });

  it("masks a secret in a gzip-compressed answer: the runtime hands over the decoded bytes", async () => {
    const name = unique();
    const text = `{"echo":"${API_KEY}","pad":"${"x".repeat(100_000)}"}`;
    await serveContent(name, text, { type: "application/json" });
    const p = await proxy({ upstream_url: `${receiver}/gzip/${name}`, inject_headers: { "x-api-key": API_KEY } });
    const res = await SELF.fetch(p.url, {
      headers: { authorization: p.credential!.authorization!, "accept-encoding": "gzip" },
    });
    expect(res.status).toBe(200);
    const got = await res.text();
    expect(got).not.toContain(API_KEY);
    expect(got).toBe(text.replace(API_KEY, "*".repeat(API_KEY.length)));
  });

  it("lets allowed ranges in without the credential; basic credentials rotate; the rate limit is 429", async () => {
    const name = unique();
    const p = await proxy({
      upstream_url: `${receiver}/echo/${name}`,
      auth: "basic",
      basic_username: "ops",
      allow_ips: ["203.0.113.0/24", "2001:db8::/32"],
      rate_limit_per_minute: 4,
    });
    expect(p.credential).toMatchObject({ type: "basic", username: "ops", password: expect.any(String) });
    const from = (ip: string, headers: Record<string, string> = {}) =>
      SELF.fetch(`${p.url}/x`, { headers: { "cf-connecting-ip": ip, ...headers } });
    expect((await from("203.0.113.50")).status).toBe(200);
    expect((await from("2001:db8:0:0::5")).status).toBe(200);
    const outside = await from("198.51.100.1");
    expect(outside.status).toBe(401);
    expect(outside.headers.get("www-authenticate")).toBe('Basic realm="proxy"');
    const old = p.credential!.authorization!;
    expect((await from("198.51.100.1", { authorization: old })).status).toBe(200);
    const rotated = await p.ok("rotate_credential", "/credential");
    expect(rotated).toMatchObject({ type: "basic", username: "ops" });
    expect((await from("198.51.100.1", { authorization: old })).status).toBe(401);
    expect((await from("198.51.100.1", { authorization: rotated.authorization })).status).toBe(200);
    // Four passed within the minute: the fifth is refused and reaches nothing.
    const limited = await from("203.0.113.9");
    await problemOf(limited, 429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await arrived(name)).length).toBe(4);
    const log = await settledLog(p, 7);
    expect(log.map((e) => [e.status, e.via])).toEqual([
      [429, "ip"],
      [200, "credential"],
      [401, null],
      [200, "credential"],
      [401, null],
      [200, "ip"],
      [200, "ip"],
    ]);
  });

  it(
    "answers 502 when the upstream cannot be reached, logged; IPv4-mapped callers match IPv4 ranges; " +
      "HEAD has no body",
    async () => {
      const down = await proxy({
        upstream_url: "http://127.0.0.1:9/closed",
        auth: "none",
        allow_ips: ["203.0.113.0/24"],
      });
      const failed = await SELF.fetch(`${down.url}/x`, { headers: { "cf-connecting-ip": "::ffff:203.0.113.5" } });
      await problemOf(failed, 502);
      expect((await settledLog(down, 1))[0]).toMatchObject({ status: 502, via: "ip", caller_ip: "::ffff:203.0.113.5" });

      const name = unique();
      const p = await proxy({
        upstream_url: `${receiver}/echo/${name}/base/`,
        auth: "none",
        allow_ips: ["2001:db8::/32", "203.0.113.7"],
      });
      const head = await SELF.fetch(`${p.url}/a%2Fb%20c?x=%26`, {
        method: "HEAD",
        headers: { "cf-connecting-ip": "203.0.113.7" },
      });
      expect(head.status).toBe(200);
      expect(await head.text()).toBe("");
      const [hit] = await arrived(name);
      expect(hit!.path).toBe(`/echo/${name}/base/a%2Fb%20c?x=%26`);
      await problemOf(await SELF.fetch(p.url, { headers: { "cf-connecting-ip": "203.0.113.8" } }), 401);
      await problemOf(await SELF.fetch(p.url, { headers: { "cf-connecting-ip": "2001:db9::1" } }), 401);
    },
  );

  it("refuses bad access rules and secrets with 422, uncharged", async () => {
    const { token } = await buyCredits(1);
    const before = (await balanceOf(token)).balance_usd;
    const upstream_url = "https://example.com/api";
    for (const body of [
      { upstream_url, auth: "none" },
      { upstream_url, allow_ips: ["300.1.1.1"] },
      { upstream_url, allow_ips: ["10.0.0.0/33"] },
      { upstream_url, allow_ips: ["2001:db8::/129"] },
      { upstream_url, allow_ips: ["example.com"] },
      { upstream_url, inject_headers: { "x-api-key": "short" } },
      { upstream_url, inject_headers: { host: "evil.example.com" } },
      { upstream_url, inject_headers: { "x-api-key": "line\r\nbreak-injected" } },
      { upstream_url, inject_query: { key: "1234567" } },
      { upstream_url, basic_username: "a:b", auth: "basic" },
      { upstream_url, rate_limit_per_minute: 0 },
      { upstream_url: "ftp://example.com/" },
      { upstream_url, unknown: true },
    ]) {
      const res = await call("POST", "/v1/proxies", { body, headers: { authorization: `Bearer ${token}` } });
      expect(res.status, JSON.stringify(body)).toBe(422);
    }
    expect((await balanceOf(token)).balance_usd).toBe(before);
    const p = await proxy({ upstream_url, auth: "none", allow_ips: ["192.0.2.1"] });
    expect(p.credential).toBeUndefined();
    expect(await p.reply("POST", "/credential")).toMatchObject({ status: 409 });
  });
});
