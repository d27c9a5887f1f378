/**
 * The timer's side of the transfers (store.ts keeps the rows): whose turn it is, when the next run is due, and what
 * one run did, its parts written in the same transaction that records the run.
 */
import type { EngineStore } from "../../../kind/kind";
import type { DonePart } from "./endpoints";
import { rowOf, type Row } from "./store";

/** The running transfer whose turn it is (the oldest due), for the resource's timer. */
export const nextRunning = (sql: SqlStorage, now: number): Row | null =>
  sql
    .exec<Row>(
      "SELECT * FROM transfers WHERE status = 'running' AND (retry_at IS NULL OR retry_at <= ?) ORDER BY seq LIMIT 1",
      now,
    )
    .toArray()[0] ?? null;

export function nextDue(sql: SqlStorage, now: number): number | null {
  const at = sql
    .exec<{ at: number | null }>("SELECT MIN(COALESCE(retry_at, 0)) AS at FROM transfers WHERE status = 'running'")
    .one().at;
  return at === null ? null : Math.max(at, now);
}

/** What one run of the timer did to a transfer. */
export interface Stepped {
  transferId: string;
  /** The attempt it worked for: a resume or cancel meanwhile makes it stale. */
  attempts: number;
  parts: DonePart[];
  completed: { etag: string | null; sha256: string } | null;
  error: { message: string; permanent: boolean } | null;
}

/** Consecutive failed runs before a transfer is failed (each retried after 5 s, 20 s). */
const MAX_FAILURES = 3;

export function recordStep(store: EngineStore, s: Stepped): void {
  const row = rowOf(store.sql, s.transferId);
  if (!row || row.status !== "running" || row.attempts !== s.attempts) return;
  for (const p of s.parts) {
    store.sql.exec(
      "INSERT OR REPLACE INTO transfer_parts (transfer_id, part_number, size, etag) VALUES (?, ?, ?, ?)",
      s.transferId,
      p.part_number,
      p.size,
      p.etag,
    );
  }
  if (s.completed) {
    store.sql.exec(
      "UPDATE transfers SET status = 'completed', sha256 = ?, destination_etag = ?, error = NULL, failures " +
        "= 0, retry_at = NULL, updated_at = ?, finished_at = ? WHERE transfer_id = ?",
      s.completed.sha256,
      s.completed.etag,
      store.now,
      store.now,
      s.transferId,
    );
    store.sql.exec("DELETE FROM transfer_parts WHERE transfer_id = ?", s.transferId);
    return;
  }
  if (s.error) {
    const failures = s.parts.length > 0 ? 1 : row.failures + 1;
    if (s.error.permanent || failures >= MAX_FAILURES) {
      store.sql.exec(
        "UPDATE transfers SET status = 'failed', error = ?, failures = ?, retry_at = NULL, updated_at = ?, " +
          "finished_at = ? WHERE transfer_id = ?",
        s.error.message,
        failures,
        store.now,
        store.now,
        s.transferId,
      );
    } else {
      const retryAt = store.now + 5000 * 4 ** (failures - 1);
      store.sql.exec(
        "UPDATE transfers SET error = ?, failures = ?, retry_at = ?, updated_at = ? WHERE transfer_id = ?",
        s.error.message,
        failures,
        retryAt,
        store.now,
        s.transferId,
      );
    }
    return;
  }
  store.sql.exec(
    "UPDATE transfers SET failures = 0, retry_at = NULL, error = NULL, updated_at = ? WHERE transfer_id = ?",
    store.now,
    s.transferId,
  );
}
