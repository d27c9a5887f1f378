/**
 * `facilitator` settlement end to end: the official v2 client (@x402/fetch) pays
 * a real `wrangler dev`, which verifies and settles through the official x402
 * facilitator implementation, which moves tokens on a local EVM.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { privateKeyToAccount } from "viem/accounts";
import type { Hex } from "viem";
import { startEvmPeer, tokenBalance, type EvmPeer } from "../peers/evm";
import { startFacilitator, type FacilitatorPeer } from "../peers/facilitator";
import { startWranglerDev } from "../../scripts/wrangler-dev.mjs";

const PAY_TO: Hex = "0x5555555555555555555555555555555555555555";
let evm: EvmPeer;
let facilitator: FacilitatorPeer;
let server: Awaited<ReturnType<typeof startWranglerDev>>;

beforeAll(async () => {
  evm = await startEvmPeer();
  facilitator = await startFacilitator(evm);
  server = await startWranglerDev({
    vars: {
      X402_SETTLEMENT: "facilitator",
      FACILITATOR_URL: facilitator.url,
      X402_ASSET: evm.token,
      X402_PAY_TO: PAY_TO,
      X402_CHAIN_ID: String(evm.chainId),
    },
  });
}, 180_000);
afterAll(async () => {
  await server?.stop();
  await facilitator?.stop();
  await evm?.stop();
});

function payingFetch(key: Hex) {
  // The local token is not one of the client's known assets: allow it explicitly, capped at $5.
  const client = registerExactEvmScheme(new x402Client(), { signer: privateKeyToAccount(key) }).setSpendControls({
    allowedAssets: [{ network: `eip155:${evm.chainId}`, asset: evm.token, maxAmountPerPayment: "5000000" }],
  });
  return wrapFetchWithPayment(fetch, client);
}

const purchase = (amount: number) => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ amount_usd: amount }),
});

describe("facilitator settlement", () => {
  it("a purchase is verified and settled by the facilitator, on chain", async () => {
    const payer = evm.payers[0]!;
    const before = await tokenBalance(evm.rpcUrl, evm.token, payer.address);
    const res = await payingFetch(payer.key)(`${server.url}/v1/credits`, purchase(1.25));
    expect(res.status, await res.clone().text()).toBe(201);
    const settlement = JSON.parse(atob(res.headers.get("payment-response")!));
    expect(settlement.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await tokenBalance(evm.rpcUrl, evm.token, payer.address)).toBe(before - 1_250_000n);
    expect(await tokenBalance(evm.rpcUrl, evm.token, PAY_TO)).toBeGreaterThanOrEqual(1_250_000n);
  });

  it("an unfunded payer is refused by the facilitator and nothing is credited", async () => {
    const res = await payingFetch(evm.unfunded.key)(`${server.url}/v1/credits`, purchase(1));
    expect(res.status).toBe(402);
    const body = (await res.json()) as { code: string; detail: string; credit_token?: string };
    expect(body.code).toBe("payment_invalid");
    expect(body.detail).toMatch(/facilitator refused/);
    expect(body.credit_token).toBeUndefined();
  });
});
