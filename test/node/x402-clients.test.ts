/**
 * The official x402 clients buy credits from a real `wrangler dev` unchanged:
 * x402-fetch (v1, X-PAYMENT) and @x402/fetch (v2, PAYMENT-SIGNATURE), and
 * `npm run buy` prints a working token.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWalletClient, http } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { baseSepolia } from "viem/chains";
import { wrapFetchWithPayment as wrapV1 } from "x402-fetch";
import { wrapFetchWithPayment as wrapV2, x402Client } from "@x402/fetch";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { startWranglerDev } from "../../scripts/wrangler-dev.mjs";

type DevServer = Awaited<ReturnType<typeof startWranglerDev>>;

let server: DevServer;
beforeAll(async () => {
  server = await startWranglerDev();
}, 120_000);
afterAll(() => server?.stop());

const purchase = (amount: number) => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ amount_usd: amount }),
});

async function balance(token: string) {
  const res = await fetch(`${server.url}/v1/credits/balance`, { headers: { authorization: `Bearer ${token}` } });
  return (await res.json()) as { balance_usd: number };
}

describe("official x402 clients against wrangler dev", () => {
  it("x402-fetch (v1) buys credits", async () => {
    const wallet = createWalletClient({
      account: privateKeyToAccount(generatePrivateKey()),
      chain: baseSepolia,
      transport: http("http://127.0.0.1:9"),
    });
    // x402-fetch pins its own viem; the wallet is the same object at runtime.
    const pay = wrapV1(fetch, wallet as unknown as Parameters<typeof wrapV1>[1], 2_000_000n);
    const res = await pay(`${server.url}/v1/credits`, purchase(1.5));
    expect(res.status).toBe(201);
    expect(res.headers.get("x-payment-response")).toBeTruthy();
    const body = (await res.json()) as { credit_token: string };
    expect((await balance(body.credit_token)).balance_usd).toBe(1.5);
  });

  it("@x402/fetch (v2) buys credits", async () => {
    const pay = wrapV2(
      fetch,
      registerExactEvmScheme(new x402Client(), { signer: privateKeyToAccount(generatePrivateKey()) }),
    );
    const res = await pay(`${server.url}/v1/credits`, purchase(0.75));
    expect(res.status).toBe(201);
    expect(res.headers.get("payment-response")).toBeTruthy();
    const body = (await res.json()) as { credit_token: string };
    expect((await balance(body.credit_token)).balance_usd).toBe(0.75);
  });

  it("npm run buy prints a credit token", async () => {
    const { stdout } = await promisify(execFile)("node", ["scripts/buy.mjs", "5"], {
      env: { ...process.env, ZEITVAULT_URL: server.url },
    });
    const token = stdout.trim();
    expect(token).toMatch(/^zv_/);
    expect((await balance(token)).balance_usd).toBe(5);
  });
});
