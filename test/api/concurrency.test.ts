/** Charging under concurrency: never overspent, never double-charged, one payment runs one call. */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  balanceOf,
  buyCredits,
  call,
  createResource,
  json,
  managed,
  signPayment,
  type PaymentRequired,
} from "../harness";

const INCREMENT_MICRO = 100;

async function ledgerOf(accountId: string) {
  const stub = env.ACCOUNTS.get(env.ACCOUNTS.idFromName(accountId));
  return runInDurableObject(stub, (_o, state) =>
    state.storage.sql.exec<{ type: string; amount: number }>("SELECT type, amount FROM ledger").toArray(),
  );
}

describe("concurrency", () => {
  it("200 parallel paid increments on a balance for exactly 100: 100 succeed, the rest 402", async () => {
    const { token: payer } = await buyCredits(1);
    const { id, mgmt } = await createResource("counters", payer, {});
    // A second account is spent down to exactly 100 increments: $0.25 − 240 days of a counter ($0.24) = $0.01.
    const { token, tokenId } = await buyCredits(0.25);
    await createResource("counters", token, { ttl_seconds: 240 * 86400 });
    expect((await balanceOf(token)).balance_usd).toBe(0.01);

    const results = await Promise.all(
      Array.from({ length: 200 }, () =>
        call("POST", `/v1/counters/${id}/increment`, { headers: managed(mgmt, token) }),
      ),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(100);
    expect(statuses.filter((s) => s === 402)).toHaveLength(100);
    const refused = await json<PaymentRequired>(results[statuses.indexOf(402)]!);
    expect(refused.code).toBe("insufficient_balance");
    expect(refused.accepts[0]!.maxAmountRequired).toBe(String(INCREMENT_MICRO));

    const balance = await balanceOf(token);
    expect(balance.balance_usd).toBe(0);
    const value = await call("GET", `/v1/counters/${id}`, { headers: managed(mgmt, payer) });
    expect((await json(value)).value).toBe(100);

    const ledger = await ledgerOf(tokenId.split(".")[0]!);
    const charges = ledger.filter((r) => r.type === "charge").reduce((s, r) => s + r.amount, 0);
    const refunds = ledger.filter((r) => r.type === "refund").reduce((s, r) => s + r.amount, 0);
    expect((charges - refunds) / 1e6).toBeCloseTo(balance.spent_usd, 6);
    expect(balance.spent_usd).toBe(0.25);
  });

  it("10 parallel uses of one x402 payment: exactly one succeeds", async () => {
    const { token } = await buyCredits(1);
    const { id, mgmt } = await createResource("counters", token, {});
    const { header, name } = await signPayment({ priceMicro: INCREMENT_MICRO });
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        call("POST", `/v1/counters/${id}/increment`, { headers: { ...managed(mgmt), [name]: header } }),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(9);
    const replay = await json(results.find((r) => r.status === 409)!);
    expect(replay.code).toBe("payment_replayed");
    const value = await call("GET", `/v1/counters/${id}`, { headers: managed(mgmt, token) });
    expect((await json(value)).value).toBe(1);
  });

  it("parallel spends through a sub-token never pass its cap", async () => {
    const { token } = await buyCredits(1);
    const { id, mgmt } = await createResource("counters", token, {});
    const before = (await balanceOf(token)).balance_usd;
    const mint = await call("POST", "/v1/credits/subtokens", {
      body: { cap_usd: 0.0025, label: "capped", days: 1 },
      headers: { authorization: `Bearer ${token}` },
    });
    const sub = (await json(mint)).credit_token as string;
    const grand = await call("POST", "/v1/credits/subtokens", {
      body: { cap_usd: 0.002, label: "nested", days: 1 },
      headers: { authorization: `Bearer ${sub}` },
    });
    expect(grand.status).toBe(201);
    const grandToken = (await json(grand)).credit_token as string;

    const spend = (t: string) => call("POST", `/v1/counters/${id}/increment`, { headers: managed(mgmt, t) });
    const results = await Promise.all([
      ...Array.from({ length: 30 }, () => spend(grandToken)),
      ...Array.from({ length: 30 }, () => spend(sub)),
    ]);
    const ok = results.filter((r) => r.status === 200).length;
    expect(ok).toBe(25); // the sub-token's cap: 0.0025 / 0.0001
    const capped = results.find((r) => r.status === 402)!;
    expect((await json(capped)).code).toBe("cap_exceeded");
    expect((await balanceOf(sub)).cap_remaining_usd).toBe(0);
    expect((await balanceOf(grandToken)).spent_usd).toBeLessThanOrEqual(0.002);
    expect((await balanceOf(token)).balance_usd).toBeCloseTo(before - 0.0025, 6);
  });
});
