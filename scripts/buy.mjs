#!/usr/bin/env node
// Buys credits from a local Zeitvault with a real x402 payment signed by a throwaway key,
// through the official v2 client (@x402/fetch). Meant for X402_SETTLEMENT=none (npm run dev):
// nothing moves on chain, but the payment is signed and verified exactly as in production.
//   npm run buy -- 5            buy $5 from http://localhost:8787
//   ZEITVAULT_URL=… PAYER_PRIVATE_KEY=0x… npm run buy -- 1
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";

const amount = Number(process.argv[2] ?? "5");
const base = (process.env.ZEITVAULT_URL ?? "http://localhost:8787").replace(/\/$/, "");
if (!Number.isFinite(amount) || amount <= 0) {
  console.error("usage: npm run buy -- <amount in USD>");
  process.exit(2);
}

const account = privateKeyToAccount(process.env.PAYER_PRIVATE_KEY ?? generatePrivateKey());
// The client caps payments at $1 by default; the amount asked for on the command line is the cap here.
const client = registerExactEvmScheme(new x402Client(), { signer: account }).setSpendControls({
  maxAmountPerPayment: `$${amount}`,
});
const pay = wrapFetchWithPayment(fetch, client);
const res = await pay(`${base}/v1/credits`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ amount_usd: amount }),
});
const body = await res.json();
if (res.status !== 201) {
  console.error(`purchase failed (${res.status}):`, JSON.stringify(body, null, 2));
  process.exit(1);
}
console.error(
  `bought $${body.balance_usd} of credits as ${account.address}; token id ${body.token_id}, expires ${body.expires_at}`,
);
console.log(body.credit_token);
