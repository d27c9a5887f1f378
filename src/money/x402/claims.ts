/**
 * The (from, nonce) claim of an x402 authorization in D1. The primary key makes
 * the insert the atomic claim: of many concurrent uses of one payment, exactly
 * one inserts the row and runs; the rest are refused as replays.
 */
import { AppError } from "../../http/errors";
import type { VerifiedPayment } from "./verify";

export interface ClaimKey {
  network: string;
  payer: string;
  nonce: string;
}

export async function claimPayment(
  db: D1Database,
  key: ClaimKey,
  p: VerifiedPayment,
  operation: string,
  requestId: string,
): Promise<void> {
  const result = await db
    .prepare(
      `INSERT INTO payments
         (network, payer, nonce, amount_micro, operation, status, request_id, valid_before, created_at)
       VALUES (?, ?, ?, ?, ?, 'claimed', ?, ?, ?) ON CONFLICT DO NOTHING`,
    )
    .bind(
      key.network,
      key.payer,
      key.nonce,
      Number(p.value),
      operation,
      requestId,
      Number(p.validBefore) * 1000,
      Date.now(),
    )
    .run();
  if (result.meta.changes !== 1) {
    throw new AppError("payment_replayed", "This payment authorization (payer and nonce) has already been used.");
  }
}

/** Frees a claim whose call failed before anything was settled, so the same signed payment can be sent again. */
export async function releasePayment(db: D1Database, key: ClaimKey): Promise<void> {
  await db
    .prepare(
      "DELETE FROM payments WHERE network = ? AND payer = ? AND nonce = ? AND status = 'claimed' AND tx_hash IS NULL",
    )
    .bind(key.network, key.payer, key.nonce)
    .run();
}

export async function recordSettlement(
  db: D1Database,
  key: ClaimKey,
  txHash: string | null,
  settled: boolean,
): Promise<void> {
  await db
    .prepare("UPDATE payments SET status = ?, tx_hash = ? WHERE network = ? AND payer = ? AND nonce = ?")
    .bind(settled ? "settled" : "claimed", txHash, key.network, key.payer, key.nonce)
    .run();
}
