/**
 * Rate limits per credential and per client IP (docs/api.md#rate-limits), per public address (§12), and the anonymous
 * free tier.
 *
 * Requests go through the worker's own fetch handler, in workerd, with the real D1 and Durable Objects, but with an env
 * of this file's choosing: the low-limit twins of the rate limiter bindings (vitest.config.ts: 5 per credential, 8 per
 * IP, 6 per public address a minute) and, for the free tier, FREE_CALLS_PER_DAY. Every other test file keeps the
 * wrangler.toml settings.
 */
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import type { Env } from "../../src/env";
import { checksum } from "../../src/auth/tokens";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ORIGIN, buyCredits, call, createResource, json, publicUrl } from "../harness";

const CREDENTIAL_LIMIT = 5;
const IP_LIMIT = 8;
const ADDRESS_LIMIT = 6;
const lowLimits = env as unknown as {
  TEST_RATE_LIMITER: RateLimit;
  TEST_IP_RATE_LIMITER: RateLimit;
  TEST_ASK_RATE_LIMITER: RateLimit;
  TEST_ADDRESS_RATE_LIMITER: RateLimit;
};
const ASK_LIMIT = 3;

interface Send {
  ip: string;
  headers?: Record<string, string>;
  body?: unknown;
  vars?: Partial<Env>;
}

async function send(method: string, path: string, o: Send): Promise<Response> {
  const testEnv: Env = {
    ...env,
    RATE_LIMITER: lowLimits.TEST_RATE_LIMITER,
    IP_RATE_LIMITER: lowLimits.TEST_IP_RATE_LIMITER,
    ASK_RATE_LIMITER: lowLimits.TEST_ASK_RATE_LIMITER,
    ADDRESS_RATE_LIMITER: lowLimits.TEST_ADDRESS_RATE_LIMITER,
    ADDRESS_RATE_LIMIT_PER_MINUTE: String(ADDRESS_LIMIT),
    ASK_RATE_LIMIT_PER_MINUTE: String(ASK_LIMIT),
    RATE_LIMIT_PER_MINUTE: String(CREDENTIAL_LIMIT),
    IP_RATE_LIMIT_PER_MINUTE: String(IP_LIMIT),
    ...o.vars,
  };
  const headers = new Headers({ "CF-Connecting-IP": o.ip, ...o.headers });
  if (o.body !== undefined) headers.set("content-type", "application/json");
  const request = new Request(`${ORIGIN}${path}`, {
    method,
    headers,
    body: o.body === undefined ? undefined : JSON.stringify(o.body),
  });
  const ctx = createExecutionContext();
  const res = await worker.fetch(request, testEnv, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

let ipCounter = 0;
const freshIp = () => `198.51.100.${++ipCounter}`;

/** Windows are aligned to the clock: start a burst early enough in a minute that it cannot straddle two. */
async function freshWindow(): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 50_000) await new Promise((r) => setTimeout(r, 60_000 - intoMinute + 100));
}

const limits = (res: Response) => ({
  limit: res.headers.get("RateLimit-Limit"),
  remaining: res.headers.get("RateLimit-Remaining"),
  reset: Number(res.headers.get("RateLimit-Reset")),
});

async function expectRateLimited(res: Response, limit: number): Promise<void> {
  expect(res.status).toBe(429);
  expect(res.headers.get("content-type")).toBe("application/problem+json");
  expect((await json(res)).code).toBe("rate_limited");
  const retryAfter = Number(res.headers.get("Retry-After"));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(limits(res)).toMatchObject({ limit: String(limit), remaining: "0" });
}

describe("rate limits", () => {
  it("a credential gets its limit a minute from any address, then 429 with Retry-After", async () => {
    const { token } = await buyCredits(1);
    const other = await buyCredits(1);
    await freshWindow();
    const ip = freshIp();
    const balance = (t: string, from = ip) =>
      send("GET", "/v1/credits/balance", { ip: from, headers: { authorization: `Bearer ${t}` } });
    for (let i = 1; i <= CREDENTIAL_LIMIT; i++) {
      const res = await balance(token);
      expect(res.status).toBe(200);
      const shown = limits(res);
      expect(shown).toMatchObject({ limit: String(CREDENTIAL_LIMIT), remaining: String(CREDENTIAL_LIMIT - i) });
      expect(shown.reset).toBeGreaterThanOrEqual(1);
      expect(shown.reset).toBeLessThanOrEqual(60);
    }
    await expectRateLimited(await balance(token), CREDENTIAL_LIMIT);
    // Counted per credential, not per address...
    await expectRateLimited(await balance(token, freshIp()), CREDENTIAL_LIMIT);
    // ...and another credential from the same address has its own: the address (7 of 8 used) is now the tighter limit.
    const res = await balance(other.token);
    expect(res.status).toBe(200);
    expect(limits(res)).toMatchObject({ limit: String(IP_LIMIT), remaining: "1" });
  });

  it("a forged token naming a victim's account spends only its own limit", async () => {
    const { token: victim } = await buyCredits(1);
    // Same account id, another secret, a valid checksum: it passes the format check, not the hash check.
    const body = victim.slice(0, -6);
    const forgedBody = body.slice(0, -1) + (body.endsWith("A") ? "B" : "A");
    const forged = forgedBody + checksum(forgedBody);
    await freshWindow();
    for (let i = 0; i < CREDENTIAL_LIMIT; i++) {
      expect(
        (await send("GET", "/v1/credits/balance", { ip: freshIp(), headers: { authorization: `Bearer ${forged}` } }))
          .status,
      ).toBe(401);
    }
    await expectRateLimited(
      await send("GET", "/v1/credits/balance", { ip: freshIp(), headers: { authorization: `Bearer ${forged}` } }),
      CREDENTIAL_LIMIT,
    );
    const real = await send("GET", "/v1/credits/balance", {
      ip: freshIp(),
      headers: { authorization: `Bearer ${victim}` },
    });
    expect(real.status).toBe(200);
    expect(limits(real).remaining).toBe(String(CREDENTIAL_LIMIT - 1));
  });

  it("an address gets its limit a minute without any credential; another address is counted apart", async () => {
    await freshWindow();
    const ip = freshIp();
    for (let i = 1; i <= IP_LIMIT; i++) {
      const res = await send("GET", "/v1/prices", { ip });
      expect(res.status).toBe(200);
      expect(limits(res)).toMatchObject({ limit: String(IP_LIMIT), remaining: String(IP_LIMIT - i) });
    }
    await expectRateLimited(await send("GET", "/v1/prices", { ip }), IP_LIMIT);
    // Credentials do not lift the address's limit.
    const { token } = await buyCredits(1);
    await expectRateLimited(
      await send("GET", "/v1/credits/balance", { ip, headers: { authorization: `Bearer ${token}` } }),
      IP_LIMIT,
    );
    expect((await send("GET", "/v1/prices", { ip: freshIp() })).status).toBe(200);
    // IPv6 addresses are counted by their /64.
    const v6 = (host: string) => send("GET", "/v1/prices", { ip: `2001:db8:1:2::${host}` });
    for (let i = 1; i <= IP_LIMIT; i++) expect((await v6(i.toString(16))).status).toBe(200);
    await expectRateLimited(await v6("ffff"), IP_LIMIT);
  });

  it("a public address's per-minute limit is for all its callers together; another address counts apart", async () => {
    await freshWindow();
    const { token } = await buyCredits(1);
    const page = async () =>
      new URL(publicUrl((await createResource("pages", token, { content: "# Hello" })).record)).pathname;
    const [busy, quiet] = [await page(), await page()];
    // Each call from an address of its own, so only the address's limit can be what refuses.
    for (let i = 1; i <= ADDRESS_LIMIT; i++) expect((await send("GET", busy, { ip: freshIp() })).status).toBe(200);
    const refused = await send("GET", busy, { ip: freshIp() });
    expect((await json(refused.clone())).detail).toMatch(/to this address/);
    await expectRateLimited(refused, ADDRESS_LIMIT);
    expect((await send("GET", `${busy}/anything-below`, { ip: freshIp() })).status).toBe(429);
    expect((await send("GET", quiet, { ip: freshIp() })).status).toBe(200);
  });

  it("covers /oauth and /mcp too, and leaves pages outside the API alone", async () => {
    await freshWindow();
    const ip = freshIp();
    const oauth = await send("POST", "/oauth/token", {
      ip,
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(oauth.headers.get("RateLimit-Limit")).toBe(String(IP_LIMIT));
    const mcp = await send("POST", "/mcp", { ip, body: { jsonrpc: "2.0", id: 1, method: "ping" } });
    expect(mcp.headers.get("RateLimit-Remaining")).toBe(String(IP_LIMIT - 2));
    // A tool call counts once: the REST call it makes inside the worker is not counted again.
    const tool = await send("POST", "/mcp", {
      ip,
      body: { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "list_prices", arguments: {} } },
    });
    expect(tool.status).toBe(200);
    expect((await json<{ result: CallToolResult }>(tool)).result.isError).toBeFalsy();
    expect((await send("GET", "/v1/prices", { ip })).headers.get("RateLimit-Remaining")).toBe(String(IP_LIMIT - 4));
    expect((await send("GET", "/openapi.json", { ip })).headers.get("RateLimit-Limit")).toBeNull();
  });
});

describe("a form's hourly share per client address (its own count, kept by the form)", () => {
  async function form(max: number) {
    const { token } = await buyCredits(1);
    const { record } = await createResource("forms", token, {
      title: "Contact",
      fields: [{ name: "message", label: "Message", required: true }],
      max_per_ip_per_hour: max,
    });
    const path = new URL(publicUrl(record)).pathname;
    return (ip?: string) =>
      call("POST", path, { body: { message: "hi" }, headers: ip ? { "cf-connecting-ip": ip } : {} });
  }

  it("counts an IPv6 client by its /64: addresses rotating inside share one share; another /64 is apart", async () => {
    const post = await form(2);
    expect((await post("2001:db8:1:2::a")).status).toBe(201);
    expect((await post("2001:db8:1:2:ffff:ffff:ffff:1")).status).toBe(201);
    const refused = await post("2001:0db8:0001:0002::b");
    expect(refused.status).toBe(429);
    expect((await json(refused)).detail).toMatch(/from one address/);
    expect((await post("2001:db8:1:3::a")).status).toBe(201);
    expect((await post("203.0.113.7")).status).toBe(201);
  });

  it("takes submissions with no client address in one bucket of a quarter share; addressed ones apart", async () => {
    const post = await form(8);
    expect((await post()).status).toBe(201);
    expect((await post()).status).toBe(201);
    const refused = await post();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await json(refused)).detail).toMatch(/at most 2 submissions an hour from senders without a client address/);
    expect((await post("203.0.113.8")).status).toBe(201);
  });
});

describe("anonymous free tier", () => {
  const FREE = { FREE_CALLS_PER_DAY: "2" };

  it("is off by default: a paid call without payment is 402 and nothing is counted", async () => {
    const res = await call("POST", "/v1/counters", { body: {}, headers: { "CF-Connecting-IP": freshIp() } });
    expect(res.status).toBe(402);
    expect((await json(res)).code).toBe("payment_required");
    const counted = await env.DB.prepare("SELECT COUNT(*) AS n FROM free_calls").first<{ n: number }>();
    expect(counted?.n).toBe(0);
  });

  it("when on, runs FREE_CALLS_PER_DAY calls per address free, then asks for payment", async () => {
    await freshWindow();
    const ip = freshIp();
    const created = await send("POST", "/v1/counters", { ip, vars: FREE, body: { max: 1 } });
    expect(created.status).toBe(201);
    const { id, management_token } = await json(created);
    const owner = await env.DB.prepare("SELECT owner FROM resources WHERE id = ?").bind(id).first<{ owner: string }>();
    expect(owner?.owner).toMatch(/^anon_[0-9a-f]{16}$/);
    expect(owner?.owner).not.toContain(ip);

    // A refused call (it would cross the bound) gives its free call back.
    const increment = (by: number) =>
      send("POST", `/v1/counters/${id}/increment`, {
        ip,
        vars: FREE,
        body: { by },
        headers: { authorization: `Bearer ${management_token}` },
      });
    expect((await increment(5)).status).toBe(409);
    expect((await increment(1)).status).toBe(200);

    const third = await send("POST", "/v1/counters", { ip, vars: FREE, body: {} });
    expect(third.status).toBe(402);
    expect((await json(third)).code).toBe("payment_required");
    expect((await send("POST", "/v1/counters", { ip: freshIp(), vars: FREE, body: {} })).status).toBe(201);
  });

  it("never makes a credit purchase free", async () => {
    const res = await send("POST", "/v1/credits", { ip: freshIp(), vars: FREE, body: { amount_usd: 1 } });
    expect(res.status).toBe(402);
  });
});

it("free Ask writes have their own, tighter limit per address", async () => {
  const ip = "203.0.113.77";
  const ask = () => send("POST", "/v1/feature-requests", { ip, body: { title: "more kinds" } });
  for (let i = 0; i < ASK_LIMIT; i++) expect((await ask()).status).toBe(201);
  const refused = await ask();
  expect(refused.status).toBe(429);
  expect(refused.headers.get("retry-after")).toBeTruthy();
  expect((await send("GET", "/v1/prices", { ip })).status).toBe(200); // the rest of the API is not affected
});

it("making sandboxes is a free write: the same tighter limit per address", async () => {
  const ip = "203.0.113.78";
  const make = () => send("POST", "/v1/sandboxes", { ip, body: {} });
  for (let i = 0; i < ASK_LIMIT; i++) expect((await make()).status).toBe(201);
  const refused = await make();
  expect(refused.status).toBe(429);
  expect(refused.headers.get("content-type")).toContain("application/problem+json");
});
