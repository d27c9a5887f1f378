/**
 * Creates and extends are not charged against a hold (billing.ts) but straight at the account,
 * before the work, and given back if the work fails.
 */
import type { Env } from "../../src/env";
import { unwrap } from "../../src/http/errors";
import { accountStub } from "../../src/stubs";
import type { Payer } from "../../src/money/payment";

/** One amount, once, before the work; null when nothing was charged (x402 paid it, or it was free). */
export async function chargeNow(env: Env, payer: Payer, amount: number, operation: string, resourceId: string, requestId: string): Promise<number | null> {
  if (payer.type === "prepaid" || amount === 0) return null;
  const { accountId, tokenId, tokenHash } = payer;
  return unwrap(await accountStub(env, accountId).charge({ tokenId, tokenHash, amount, operation, resourceId, requestId })).chargeId;
}

/** Gives back a direct charge whose work failed. */
export async function refundCharge(env: Env, payer: Payer, chargeId: number | null, requestId: string): Promise<void> {
  if (payer.type !== "credit" || chargeId === null) return;
  await accountStub(env, payer.accountId).refund({ chargeId, requestId });
}
