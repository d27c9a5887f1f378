/**
 * A production deployment with a setting missing or unsafe fails closed: 503 `service_misconfigured`
 * naming the setting, never a 500, never x402 terms that pay the wrong place, never a charge. And the
 * readiness report (`/v1/admin/health`) tells a working deployment from a broken binding or a stopped engine.
 *
 * Requests go through the worker's own fetch handler with an env of this file's choosing (as
 * rate-limit.test.ts does), over the real D1, R2, queue and Durable Objects.
 */
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import type { Env } from "../../src/env";
import { LATEST_MIGRATION } from "../../src/operator/schema-version";
import type { readinessReport } from "../../src/operator/health-routes";
import { ORIGIN, buyCredits, call, json, signPayment, type PaymentRequired, type Problem } from "../harness";

/** The readiness report (`GET /v1/admin/health`). */
type Readiness = Awaited<ReturnType<typeof readinessReport>>;

const ADMIN = "k3Jq9Zx2Lw8Rt5Vb7Nm4Hs6Gd1Fa0PcYeUiOo-_Ty";
const BASE_USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const PAY_TO = "0x52908400098527886E0F7030069857D2E4169EE7"; // EIP-55's own mixed-case example
const dataKey = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));

/** What `npm run setup` produces for production: every setting right. */
const production: Partial<Env> = {
  ENVIRONMENT: "production",
  BASE_URL: "https://api.zeitvault.example",
  X402_NETWORK: "base",
  X402_CHAIN_ID: "8453",
  X402_ASSET: BASE_USDC,
  X402_ASSET_NAME: "USD Coin",
  X402_ASSET_VERSION: "2",
  X402_PAY_TO: PAY_TO,
  X402_SETTLEMENT: "facilitator",
  FACILITATOR_URL: "https://facilitator.example/",
  DATA_ENCRYPTION_KEY: dataKey,
  ADMIN_TOKEN: ADMIN,
  ALLOW_PRIVATE_TARGETS: "false",
  DELIVERY_RETRY_SCALE: "1",
};

async function send(path: string, vars: Partial<Env>, init: RequestInit = {}): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(`${ORIGIN}${path}`, init), { ...env, ...vars } as Env, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

const createCounter = (vars: Partial<Env>, headers: Record<string, string> = {}) =>
  send("/v1/counters", vars, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: "{}",
  });

async function refused(res: Response, setting: string) {
  const text = await res.text();
  expect(res.status, text).toBe(503);
  expect(res.headers.get("content-type")).toContain("application/problem+json");
  expect(res.headers.get("PAYMENT-REQUIRED")).toBeNull();
  const body = JSON.parse(text) as Problem & { settings: { setting: string; problem: string; fix: string }[] };
  expect(body.code).toBe("service_misconfigured");
  expect(body).not.toHaveProperty("accepts");
  expect(body.detail).toContain(setting);
  expect(body.settings.map((s: { setting: string }) => s.setting)).toContain(setting);
  for (const s of body.settings) expect(s.fix.length).toBeGreaterThan(10);
  return body;
}

describe("a production deployment", () => {
  it("with every setting right offers terms that pay its own address on Base", async () => {
    const res = await createCounter(production);
    expect(res.status).toBe(402);
    const terms = (await json<PaymentRequired>(res)).accepts[0];
    expect(terms).toMatchObject({
      network: "base",
      payTo: PAY_TO,
      asset: BASE_USDC,
      extra: { name: "USD Coin", version: "2" },
    });
  });

  const unsafe: [string, Partial<Env>, string][] = [
    ["a pay-to that is unset", { X402_PAY_TO: "" }, "X402_PAY_TO"],
    ["a pay-to that is the zero address", { X402_PAY_TO: "0x0000000000000000000000000000000000000000" }, "X402_PAY_TO"],
    ["a pay-to that is the burn address", { X402_PAY_TO: "0x000000000000000000000000000000000000dEaD" }, "X402_PAY_TO"],
    ["a pay-to whose checksum fails", { X402_PAY_TO: "0x52908400098527886E0F7030069857D2E4169Ee7" }, "X402_PAY_TO"],
    [
      "a testnet network",
      {
        X402_NETWORK: "base-sepolia",
        X402_CHAIN_ID: "84532",
        X402_ASSET: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
        X402_ASSET_NAME: "USDC",
      },
      "X402_NETWORK",
    ],
    ["settlement none", { X402_SETTLEMENT: "none" }, "X402_SETTLEMENT"],
    [
      "x402.org's testnet facilitator on mainnet",
      { FACILITATOR_URL: "https://x402.org/facilitator" },
      "FACILITATOR_URL",
    ],
    ["a missing signing key", { OAUTH_PRIVATE_JWK: undefined }, "OAUTH_PRIVATE_JWK"],
    ["a missing TSA key", { TSA_PRIVATE_JWK: undefined }, "TSA_PRIVATE_JWK / TSA_CERT_PEM"],
    ["a missing encryption key", { DATA_ENCRYPTION_KEY: undefined }, "DATA_ENCRYPTION_KEY"],
    ["an unset BASE_URL", { BASE_URL: "" }, "BASE_URL"],
    ["an http BASE_URL", { BASE_URL: "http://api.zeitvault.example" }, "BASE_URL"],
    ["private targets allowed", { ALLOW_PRIVATE_TARGETS: "true" }, "ALLOW_PRIVATE_TARGETS"],
    ["an unknown ENVIRONMENT", { ENVIRONMENT: "prod" }, "ENVIRONMENT"],
  ];
  for (const [name, vars, setting] of unsafe) {
    it(`with ${name} answers 503 naming ${setting}, offers no terms and takes no payment`, async () => {
      const misconfigured = { ...production, ...vars };
      await refused(await createCounter(misconfigured), setting);
      // A real signed payment is refused before it is claimed: nothing recorded, nothing to settle.
      const payment = await signPayment({ priceMicro: 1000, payTo: PAY_TO as `0x${string}` });
      await refused(await createCounter(misconfigured, { [payment.name]: payment.header }), setting);
      const claims = await env.DB.prepare("SELECT count(*) AS n FROM payments WHERE payer = ?")
        .bind(payment.payer.toLowerCase())
        .first<{ n: number }>();
      expect(claims?.n).toBe(0);
    });
  }

  it("keeps every money, OAuth, MCP and public route closed, and liveness, the docs and readiness open", async () => {
    const broken = { ...production, X402_PAY_TO: "" };
    for (const path of ["/v1/prices", "/v1/credits/balance", "/.well-known/jwks.json", "/p/anything"])
      await refused(await send(path, broken), "X402_PAY_TO");
    await refused(
      await send("/oauth/token", broken, {
        method: "POST",
        body: new URLSearchParams({ grant_type: "client_credentials" }),
      }),
      "X402_PAY_TO",
    );
    await refused(
      await send("/mcp", broken, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
      }),
      "X402_PAY_TO",
    );
    expect((await send("/health", broken)).status).toBe(200);
    expect((await send("/openapi.json", broken)).status).toBe(200);
    const ready = await send("/v1/admin/health", broken, { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(ready.status).toBe(503);
    const report = await json<Readiness>(ready);
    expect(report.status).toBe("not_ready");
    expect(report.checks.find((c: { name: string }) => c.name === "configuration")).toMatchObject({
      status: "fail",
      detail: expect.stringContaining("X402_PAY_TO"),
    });
  });

  it("with a weak operator token closes only the operator endpoints", async () => {
    const weak = { ...production, ADMIN_TOKEN: "admin123" };
    await refused(
      await send("/v1/admin/health", weak, { headers: { authorization: "Bearer admin123" } }),
      "ADMIN_TOKEN",
    );
    await refused(
      await send("/v1/admin/feature-requests", weak, { headers: { authorization: "Bearer admin123" } }),
      "ADMIN_TOKEN",
    );
    await refused(
      await send("/admin", weak, { headers: { authorization: `Basic ${btoa("operator:admin123")}` } }),
      "ADMIN_TOKEN",
    );
    expect((await createCounter(weak)).status).toBe(402);
  });

  it("never answers a problem a setting caused with a 500", async () => {
    const res = await send("/.well-known/jwks.json", { ...production, OAUTH_PRIVATE_JWK: '{"kty":"RSA"}' });
    const body = await refused(res, "OAUTH_PRIVATE_JWK");
    expect(body.detail).toMatch(/private JWK/);
    // The problem names the setting, never its value.
    expect(JSON.stringify(body)).not.toContain(dataKey);
  });
});

describe("readiness", () => {
  const asOperator = { headers: { authorization: "Bearer test-admin-token" } };

  it("asks every binding and peer and reports the test deployment ready, with versions", async () => {
    // Something in each of D1 and the accounts, so the report is not about empty tables only.
    await buyCredits(1);
    const res = await call("GET", "/v1/admin/health", asOperator);
    const report = await json<Readiness>(res);
    expect(res.status, JSON.stringify(report)).toBe(200);
    expect(report.status).toBe("ready");
    const byName = Object.fromEntries(report.checks.map((c) => [c.name, c]));
    expect(Object.keys(byName).sort()).toEqual([
      "configuration",
      "d1",
      "durable_objects",
      "egress_proxy",
      "engine",
      "keys",
      "queue",
      "r2",
      "settlement",
    ]);
    expect(byName.d1).toMatchObject({ status: "ok", version: LATEST_MIGRATION });
    expect(byName.engine).toMatchObject({ status: "ok" });
    expect(byName.egress_proxy).toMatchObject({ status: "ok", version: expect.stringMatching(/tinyproxy/i) });
    expect(byName.settlement!.detail).toMatch(/none \(development/);
    expect(res.headers.get("cache-control")).toBe("no-store");
  });

  it("reports a stopped engine, an unmigrated database and an unreachable proxy as failures", async () => {
    const broken: Partial<Env> = {
      ENGINE_URL: "http://127.0.0.1:1",
      DB: env.TEST_EMPTY_DB,
      EGRESS_PROXY_URL: "http://127.0.0.1:1",
    };
    const res = await send("/v1/admin/health", broken, asOperator);
    expect(res.status).toBe(503);
    const report = await json<Readiness>(res);
    expect(report.status).toBe("not_ready");
    const byName = Object.fromEntries(report.checks.map((c) => [c.name, c]));
    expect(byName.engine).toMatchObject({ status: "fail", detail: expect.stringContaining("not reachable") });
    expect(byName.d1).toMatchObject({ status: "fail", detail: expect.stringMatching(/migrations apply/) });
    expect(byName.egress_proxy).toMatchObject({ status: "fail" });
    expect(byName.r2!.status).toBe("ok");
  });

  it("is the operator's alone, and liveness is anyone's", async () => {
    expect((await call("GET", "/v1/admin/health")).status).toBe(401);
    expect((await call("GET", "/v1/admin/health", { headers: { authorization: "Bearer wrong" } })).status).toBe(401);
    expect((await send("/v1/admin/health", { ADMIN_TOKEN: undefined }, asOperator)).status).toBe(404);
    const live = await call("GET", "/health");
    expect(live.status).toBe(200);
    expect(await json(live)).toEqual({ status: "ok", service: "zeitvault", version: "1.0.0" });
  });
});
