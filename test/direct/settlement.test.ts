/**
 * `direct` settlement against a real local chain (hardhat + an EIP-3009 token):
 * a purchase moves tokens on chain; an unfunded payer, a reused nonce and an
 * authorization already spent on chain are refused with nothing credited.
 */
import { env } from "cloudflare:test";
import { createPublicClient, createWalletClient, defineChain, http, parseAbi, parseSignature, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { balanceOf, call, createResource, json, signPayment, usd } from "../harness";

const evm = env.TEST_EVM;
const chain = defineChain({
  id: evm.chainId,
  name: "local",
  nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
  rpcUrls: { default: { http: [evm.rpcUrl] } },
});
const reader = createPublicClient({ chain, transport: http(evm.rpcUrl, { retryCount: 0 }) });
const abi = parseAbi([
  "function balanceOf(address) view returns (uint256)",
  "function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 " +
    "validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)",
]);

const tokenBalance = (address: Hex) =>
  reader.readContract({ address: evm.token, abi, functionName: "balanceOf", args: [address] });

async function buy<T = Record<string, unknown>>(amountUsd: number, key: Hex, version: 1 | 2 = 1) {
  const { header, name } = await signPayment({ priceMicro: usd(amountUsd), key, version });
  const res = await call("POST", "/v1/credits", { body: { amount_usd: amountUsd }, headers: { [name]: header } });
  return { res, body: await json<T>(res), header, name };
}

describe("direct settlement on a local EVM", () => {
  it("a purchase moves exactly the price from payer to payTo, on chain", async () => {
    const payer = evm.payers[0]!;
    const payTo = env.X402_PAY_TO as Hex;
    const [payerBefore, payToBefore] = [await tokenBalance(payer.address), await tokenBalance(payTo)];
    const { res, body } = await buy<{ credit_token: string }>(2.5, payer.key);
    expect(res.status, JSON.stringify(body)).toBe(201);
    const settlement = JSON.parse(atob(res.headers.get("X-PAYMENT-RESPONSE")!));
    expect(settlement.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    const receipt = await reader.getTransactionReceipt({ hash: settlement.transaction });
    expect(receipt.status).toBe("success");
    expect(await tokenBalance(payer.address)).toBe(payerBefore - 2_500_000n);
    expect(await tokenBalance(payTo)).toBe(payToBefore + 2_500_000n);
    expect((await balanceOf(body.credit_token)).balance_usd).toBe(2.5);
    const row = await env.DB.prepare("SELECT status, tx_hash FROM payments WHERE tx_hash = ?")
      .bind(settlement.transaction)
      .first();
    expect(row).toEqual({ status: "settled", tx_hash: settlement.transaction });
  });

  it("a v2 per-call payment settles on chain too", async () => {
    const payer = evm.payers[1]!;
    const before = await tokenBalance(payer.address);
    const { header, name } = await signPayment({ priceMicro: 30_000, key: payer.key, version: 2 });
    const res = await call("POST", "/v1/counters", { body: {}, headers: { [name]: header } });
    expect(res.status, await res.clone().text()).toBe(201);
    expect(await tokenBalance(payer.address)).toBe(before - 30_000n);
  });

  it("an unfunded payer is refused and nothing is credited", async () => {
    const { res, body } = await buy(1, evm.unfunded.key);
    expect(res.status).toBe(402);
    expect(body.code).toBe("payment_invalid");
    expect(body.detail).toMatch(/would fail on chain/);
    expect(body.credit_token).toBeUndefined();
    const accounts = await env.DB.prepare("SELECT count(*) AS n FROM payments WHERE payer = ?")
      .bind(evm.unfunded.address.toLowerCase())
      .first<{ n: number }>();
    expect(accounts!.n).toBe(0);
  });

  it("a reused nonce is refused, whether used here or on chain directly", async () => {
    const payer = evm.payers[2]!;
    const first = await buy(0.25, payer.key);
    expect(first.res.status).toBe(201);
    const again = await call("POST", "/v1/credits", {
      body: { amount_usd: 0.25 },
      headers: { [first.name]: first.header },
    });
    expect(again.status).toBe(409);
    expect((await json(again)).code).toBe("payment_replayed");

    // Someone submits the authorization to the token contract first: the service must not credit it.
    const { header } = await signPayment({ priceMicro: usd(0.25), key: payer.key });
    const auth = JSON.parse(atob(header)).payload;
    const { v, r, s } = parseSignature(auth.signature);
    const relayer = createWalletClient({
      chain,
      transport: http(evm.rpcUrl, { retryCount: 0 }),
      account: privateKeyToAccount(evm.relayerKey),
    });
    const a = auth.authorization;
    const hash = await relayer.writeContract({
      address: evm.token,
      abi,
      functionName: "transferWithAuthorization",
      args: [a.from, a.to, BigInt(a.value), BigInt(a.validAfter), BigInt(a.validBefore), a.nonce, Number(v), r, s],
    });
    await reader.waitForTransactionReceipt({ hash });
    const res = await call("POST", "/v1/credits", { body: { amount_usd: 0.25 }, headers: { "X-PAYMENT": header } });
    expect(res.status).toBe(402);
    expect((await json(res)).detail).toMatch(/authorization is used/);
  });

  it("paying with credits bought on chain works end to end", async () => {
    const { body } = await buy<{ credit_token: string }>(1, evm.payers[0]!.key);
    const { record } = await createResource("counters", body.credit_token, { ttl_seconds: 86400 });
    expect(record.charged_usd).toBe(0.001);
  });
});
