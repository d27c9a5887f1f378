/**
 * The delivery log's bounds (DELIVERY_RETENTION): an attempt into the log, keeping a delivery's latest attempts,
 * and settled deliveries past their count or age deleted with their attempts (deliveries.ts).
 */
import type { DeliveryReport } from "../../src/rpc/resource";
import { DELIVERY_RETENTION } from "../../src/delivery/outbox-policy";

type Attempt = NonNullable<DeliveryReport["attempt"]>;

/** Logs attempt `number` (`attempt.at` on the resource's clock), drops the ones past attempts_kept, counts it. */
export function logAttempt(sql: SqlStorage, deliveryId: string, number: number, attempt: Attempt, now: number): void {
  sql.exec(
    "INSERT INTO delivery_attempts VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    deliveryId,
    number,
    attempt.at,
    attempt.outcome,
    attempt.statusCode,
    attempt.error,
    attempt.durationMs,
    attempt.responseExcerpt,
  );
  sql.exec(
    "DELETE FROM delivery_attempts WHERE delivery_id = ? AND number <= ?",
    deliveryId,
    number - DELIVERY_RETENTION.attempts_kept,
  );
  sql.exec("UPDATE deliveries SET attempts = ?, updated_at = ? WHERE delivery_id = ?", number, now, deliveryId);
}

/**
 * Deletes the settled deliveries past settled_kept or settled_days (at `now`, the resource's clock) and their
 * attempts; answers the stored bodies they named, for the caller to release.
 */
export function deleteExpired(sql: SqlStorage, now: number): string[] {
  const { settled_kept, settled_days } = DELIVERY_RETENTION;
  const oldest = now - settled_days * 86_400_000;
  const nth =
    sql
      .exec<{ seq: number }>(
        "SELECT seq FROM deliveries WHERE settled_at IS NOT NULL ORDER BY seq DESC LIMIT 1 OFFSET ?",
        settled_kept,
      )
      .toArray()[0]?.seq ?? 0;
  const where = "settled_at IS NOT NULL AND (seq <= ? OR settled_at < ?)";
  const keys = sql
    .exec<{ body_key: string }>(
      `SELECT DISTINCT body_key FROM deliveries WHERE ${where} AND body_key IS NOT NULL`,
      nth,
      oldest,
    )
    .toArray()
    .map((r) => r.body_key);
  sql.exec(
    `DELETE FROM delivery_attempts WHERE delivery_id IN (SELECT delivery_id FROM deliveries WHERE ${where})`,
    nth,
    oldest,
  );
  sql.exec(`DELETE FROM deliveries WHERE ${where}`, nth, oldest);
  return keys;
}
