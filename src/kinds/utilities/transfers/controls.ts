/** What the owner does to a transfer: resume it, cancel it, delete it once it is finished. */
import { AppError } from "../../../http/errors";
import type { EngineStore } from "../../../kind/kind";
import type { TransferView } from "./schema";
import { found, movedOf, view, type Row } from "./store";

/** The transfer to resume: failed (it goes on from its last part) or cancelled (it starts over, with a new upload). */
export function resumable(sql: SqlStorage, id: string): Row {
  const row = found(sql, id);
  if (row.status !== "failed" && row.status !== "cancelled")
    throw new AppError("conflict", `The transfer is ${row.status}: only a failed or cancelled one can be resumed.`);
  return row;
}

/**
 * Runs the transfer again: a failed one from the last part recorded, a cancelled one from the start under `uploadId`.
 */
export function resume(store: EngineStore, id: string, uploadId: string | null): TransferView {
  const row = resumable(store.sql, id);
  if (row.status === "cancelled")
    store.sql.exec("UPDATE transfers SET upload_id = ? WHERE transfer_id = ?", uploadId, id);
  const moved = movedOf(store.sql, row);
  store.sql.exec(
    "UPDATE transfers SET status = 'running', attempts = attempts + 1, failures = 0, retry_at = NULL, " +
      "error = NULL, finished_at = NULL, run_started_at = ?, run_start_bytes = ?, updated_at = ? WHERE " +
      "transfer_id = ?",
    store.now,
    moved,
    store.now,
    id,
  );
  return view(store.sql, found(store.sql, id), store.now);
}

/** The transfer to cancel, checked before its upload is aborted. */
export function cancellable(sql: SqlStorage, id: string): Row {
  const row = found(sql, id);
  if (row.status === "completed" || row.status === "cancelled")
    throw new AppError("conflict", `The transfer is ${row.status} already.`);
  return row;
}

export function cancel(store: EngineStore, id: string): TransferView {
  const row = cancellable(store.sql, id);
  store.sql.exec(
    "UPDATE transfers SET status = 'cancelled', attempts = attempts + 1, retry_at = NULL, updated_at = ?, " +
      "finished_at = ? WHERE transfer_id = ?",
    store.now,
    store.now,
    row.transfer_id,
  );
  store.sql.exec("DELETE FROM transfer_parts WHERE transfer_id = ?", id);
  return view(store.sql, found(store.sql, id), store.now);
}

export function remove(store: EngineStore, id: string): TransferView {
  const row = found(store.sql, id);
  if (row.status === "running" || row.status === "failed")
    throw new AppError("conflict", `The transfer is ${row.status}: cancel it first.`);
  const shown = view(store.sql, row, store.now);
  store.sql.exec("DELETE FROM transfers WHERE transfer_id = ?", id);
  return shown;
}
