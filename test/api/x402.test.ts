/**
 * x402 per docs/api.md#x402: every refused payment is a 402 `payment_invalid` with a reason, and nothing is credited.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { toHex } from "viem";
import {
  balanceOf,
  buyCredits,
  call,
  createResource,
  json,
  managed,
  signPayment,
  storageDump,
  usd,
  type PaymentRequired,
} from "../harness";

const PRICE = usd(0.5);

async function purchaseWith<T = Record<string, unknown>>(header: string, name = "X-PAYMENT") {
  const res = await call("POST", "/v1/credits", { body: { amount_usd: 0.5 }, headers: { [name]: header } });
  return { status: res.status, body: await json<T>(res) };
}

async function paymentsCount(): Promise<number> {
  return (await env.DB.prepare("SELECT count(*) AS n FROM payments").first<{ n: number }>())!.n;
}

describe("x402 refusals", () => {
  const now = BigInt(Math.floor(Date.now() / 1000));
  const cases: [string, () => Promise<string>, RegExp][] = [
    [
      "wrong amount",
      async () => (await signPayment({ priceMicro: PRICE, value: BigInt(PRICE - 1) })).header,
      /costs exactly 500000/,
    ],
    [
      "wrong payTo",
      async () =>
        (await signPayment({ priceMicro: PRICE, payTo: "0x3333333333333333333333333333333333333333" })).header,
      /pays 0x3333/,
    ],
    ["expired window", async () => (await signPayment({ priceMicro: PRICE, validBefore: now - 1n })).header, /expired/],
    [
      "window not open yet",
      async () => (await signPayment({ priceMicro: PRICE, validAfter: now + 600n })).header,
      /not valid yet/,
    ],
    ["wrong network", async () => (await signPayment({ priceMicro: PRICE, network: "base" })).header, /Wrong network/],
    [
      "signed for another chain",
      async () => (await signPayment({ priceMicro: PRICE, chainId: 8453 })).header,
      /signature/,
    ],
    [
      "signed for another asset",
      async () =>
        (await signPayment({ priceMicro: PRICE, asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" })).header,
      /signature/,
    ],
    [
      "bad signature",
      async () => {
        const decoded = JSON.parse(atob((await signPayment({ priceMicro: PRICE })).header));
        decoded.payload.signature = decoded.payload.signature.slice(0, -4) + "0000";
        return btoa(JSON.stringify(decoded));
      },
      /signature/,
    ],
    [
      "signature by someone else",
      async () => {
        const decoded = JSON.parse(atob((await signPayment({ priceMicro: PRICE })).header));
        decoded.payload.authorization.from = "0x4444444444444444444444444444444444444444";
        return btoa(JSON.stringify(decoded));
      },
      /signature/,
    ],
    ["malformed base64", async () => "%%%not-base64%%%", /base64/],
    ["malformed JSON", async () => btoa('{"x402Version": 1,'), /base64-encoded JSON/],
    [
      "wrong shape",
      async () =>
        btoa(JSON.stringify({ x402Version: 1, scheme: "exact", network: "base-sepolia", payload: { signature: 5 } })),
      /malformed/,
    ],
    ["unknown version", async () => btoa(JSON.stringify({ x402Version: 3 })), /malformed/],
  ];

  it.each(cases)("%s → 402 payment_invalid, nothing credited", async (_name, make, reason) => {
    const before = await paymentsCount();
    const { status, body } = await purchaseWith<PaymentRequired>(await make());
    expect(status).toBe(402);
    expect(body.code).toBe("payment_invalid");
    expect(body.detail).toMatch(reason);
    expect(body.accepts[0]!.maxAmountRequired).toBe(String(PRICE));
    expect(body).not.toHaveProperty("credit_token");
    expect(await paymentsCount()).toBe(before);
  });

  it("a v2 payment with a v1 network name is refused", async () => {
    const { header, name } = await signPayment({ priceMicro: PRICE, version: 2, network: "base-sepolia" });
    const { status, body } = await purchaseWith(header, name);
    expect(status).toBe(402);
    expect(body.detail).toMatch(/eip155:84532/);
  });

  it("a used payment cannot buy twice", async () => {
    const { header } = await signPayment({ priceMicro: PRICE });
    expect((await purchaseWith(header)).status).toBe(201);
    const again = await purchaseWith(header);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("payment_replayed");
  });
});

describe("x402 per call", () => {
  it("creates a resource owned by the payer address, and answers with the settlement header", async () => {
    const price = 30 * 1000; // 30 days at $0.001
    const { header, name, payer } = await signPayment({ priceMicro: price, version: 2 });
    const res = await call("POST", "/v1/counters", { body: {}, headers: { [name]: header } });
    expect(res.status, await res.clone().text()).toBe(201);
    const settlement = JSON.parse(atob(res.headers.get("PAYMENT-RESPONSE")!));
    expect(settlement).toMatchObject({ success: true, network: "eip155:84532", payer });
    const { id } = await json<{ id: string }>(res);
    const row = await env.DB.prepare("SELECT owner FROM resources WHERE id = ?").bind(id).first<{ owner: string }>();
    expect(row!.owner).toBe(payer);
    // Settled, the worker told the object so: its creation is crossed off, and no alarm will undo it.
    expect(await storageDump(id)).toContain("pending_charges: []");
  });

  it("a refused operation releases the payment so it can be sent again", async () => {
    const { token } = await buyCredits(1);
    const { id, mgmt } = await createResource("counters", token, { max: 0 });
    const { header, name } = await signPayment({
      priceMicro: 100,
      nonce: toHex(crypto.getRandomValues(new Uint8Array(32))),
    });
    const refused = await call("POST", `/v1/counters/${id}/increment`, {
      headers: { ...managed(mgmt), [name]: header },
    });
    expect(refused.status).toBe(409);
    const ok = await call("POST", `/v1/counters/${id}/decrement`, { headers: { ...managed(mgmt), [name]: header } });
    expect(ok.status).toBe(200);
    expect((await balanceOf(token)).spent_usd).toBe(0.03);
  });

  it("a 402 for an operation names that operation's exact price", async () => {
    const { token } = await buyCredits(1);
    const { id, mgmt } = await createResource("counters", token, {});
    const res = await call("POST", `/v1/resources/${id}/extend`, {
      body: { ttl_seconds: 3 * 86400 },
      headers: managed(mgmt),
    });
    expect(res.status).toBe(402);
    expect((await json<PaymentRequired>(res)).accepts[0]!.maxAmountRequired).toBe("3000");
  });
});
