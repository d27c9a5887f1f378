import { describe, expect, it } from "vitest";
import {
  balanceOf,
  buyCredits,
  call,
  json,
  signPayment,
  usd,
  type PaymentRequired,
  type PriceList,
  type Problem,
} from "../harness";

describe("credits", () => {
  it("a purchase without payment answers 402 with the terms in both x402 forms", async () => {
    const res = await call("POST", "/v1/credits", { body: { amount_usd: 0.5 } });
    expect(res.status).toBe(402);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = await json<PaymentRequired>(res);
    expect(body.code).toBe("payment_required");
    expect(body.x402Version).toBe(1);
    expect(body.accepts[0]).toMatchObject({ scheme: "exact", maxAmountRequired: "500000", network: "base-sepolia" });
    const v2 = JSON.parse(atob(res.headers.get("PAYMENT-REQUIRED")!));
    expect(v2).toMatchObject({ x402Version: 2, accepts: [{ amount: "500000", network: "eip155:84532" }] });
  });

  it("buys a token (v1 and v2), reports the balance and tops up", async () => {
    const { token, tokenId } = await buyCredits(1);
    expect(token).toMatch(/^zv_/);
    expect(await balanceOf(token)).toMatchObject({
      token_id: tokenId,
      type: "credit",
      balance_usd: 1,
      spent_usd: 0,
      cap_usd: null,
    });

    const v2 = await signPayment({ priceMicro: usd(0.25), version: 2 });
    const top = await call("POST", "/v1/credits", {
      body: { amount_usd: 0.25 },
      headers: { [v2.name]: v2.header, authorization: `Bearer ${token}` },
    });
    expect(top.status).toBe(200);
    expect(top.headers.get("PAYMENT-RESPONSE")).toBeTruthy();
    expect((await balanceOf(token)).balance_usd).toBe(1.25);
  });

  it("refuses amounts below the minimum or with more than 6 decimals", async () => {
    for (const amount_usd of [0.1, 0.2500001, -1]) {
      const res = await call("POST", "/v1/credits", { body: { amount_usd } });
      expect(res.status).toBe(422);
      expect((await json<Problem>(res)).errors![0]!.path).toBe("amount_usd");
    }
  });

  it("mints capped sub-tokens that stop at their cap", async () => {
    const { token } = await buyCredits(1);
    const res = await call("POST", "/v1/credits/subtokens", {
      body: { cap_usd: 0.002, label: "worker", days: 1 },
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(201);
    const sub = await json<{ credit_token: string }>(res);
    expect(sub).toMatchObject({ cap_usd: 0.002, label: "worker", parent_token_id: expect.any(String) });
    expect(await balanceOf(sub.credit_token)).toMatchObject({ type: "subtoken", cap_usd: 0.002, balance_usd: 0.002 });
  });

  it("rejects a mistyped token without a lookup", async () => {
    const { token } = await buyCredits(0.25);
    const typo = token.slice(0, 10) + (token[10] === "a" ? "b" : "a") + token.slice(11);
    const res = await call("GET", "/v1/credits/balance", { headers: { authorization: `Bearer ${typo}` } });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toContain("resource_metadata=");
  });

  it("publishes a price list generated from the registry, free", async () => {
    const res = await call("GET", "/v1/prices");
    expect(res.status).toBe(200);
    const body = await json<PriceList>(res);
    const ops = body.operations.map((o: { operation: string }) => o.operation);
    expect(ops).toEqual(expect.arrayContaining(["counters.create", "counters.extend", "counters.increment"]));
    // Limits stand beside the create line, from the same constants the kinds enforce.
    const blobs = body.operations.find((o: { operation: string }) => o.operation === "blobs.create");
    expect(blobs).toMatchObject({ max_ttl_seconds: 48 * 3600, limits: { max_bytes: 100_000_000 } });
  });
});
