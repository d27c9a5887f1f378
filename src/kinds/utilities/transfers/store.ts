/**
 * A transfers resource's jobs: each row is one transfer (its endpoints sealed, since they carry credentials) and its
 * parts as they land, so a run that stops (the step's time is up, the process died, the source failed) goes on from the
 * last part recorded. Parts and progress are written in the same transaction that records them done (runs.ts); the
 * owner's resume, cancel and delete are controls.ts.
 */
import { seal, unseal } from "../../../auth/sealing";
import type { Env } from "../../../env";
import { AppError } from "../../../http/errors";
import type { EngineStore } from "../../../kind/kind";
import { keysetPage, type Page } from "../../../kind/pages";
import { iso, isoOrNull } from "../../../time";
import type { DonePart, Resolved } from "./endpoints";
import { MAX_TRANSFERS, type TransferView } from "./schema";

export const TABLES = [
  `CREATE TABLE transfers (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, transfer_id TEXT NOT NULL UNIQUE, label TEXT, status TEXT NOT NULL,
    source TEXT NOT NULL, destination TEXT NOT NULL, source_view TEXT NOT NULL, destination_view TEXT NOT NULL,
    content_type TEXT NOT NULL, bytes_total INTEGER NOT NULL, part_bytes INTEGER NOT NULL,
    parts_total INTEGER NOT NULL, ranged INTEGER NOT NULL, upload_id TEXT, hash_state TEXT, sha256 TEXT,
    source_etag TEXT, destination_etag TEXT, attempts INTEGER NOT NULL, failures INTEGER NOT NULL DEFAULT 0,
    retry_at INTEGER, error TEXT, run_started_at INTEGER NOT NULL, run_start_bytes INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, finished_at INTEGER
  )`,
  "CREATE TABLE transfer_parts (transfer_id TEXT NOT NULL, part_number INTEGER NOT NULL, size INTEGER NOT " +
    "NULL, etag TEXT NOT NULL, PRIMARY KEY (transfer_id, part_number))",
];

/** The digest of what is moved stays in memory now (hashing.ts): the stored hash state goes. */
export const DROP_HASH_STATE = ["ALTER TABLE transfers DROP COLUMN hash_state"];

export type Status = TransferView["status"];

export type Row = {
  seq: number;
  transfer_id: string;
  label: string | null;
  status: Status;
  source: string;
  destination: string;
  source_view: string;
  destination_view: string;
  content_type: string;
  bytes_total: number;
  part_bytes: number;
  parts_total: number;
  ranged: number;
  upload_id: string | null;
  sha256: string | null;
  source_etag: string | null;
  destination_etag: string | null;
  attempts: number;
  failures: number;
  retry_at: number | null;
  error: string | null;
  run_started_at: number;
  run_start_bytes: number;
  created_at: number;
  updated_at: number;
  finished_at: number | null;
};

/** What a start records: worked out (and the destination's upload begun) before anything is charged. */
export interface Started {
  transferId: string;
  label: string | null;
  source: Resolved;
  destination: Resolved;
  sourceView: Record<string, unknown>;
  destinationView: Record<string, unknown>;
  contentType: string;
  size: number;
  partBytes: number;
  partsTotal: number;
  ranged: boolean;
  uploadId: string | null;
  sourceEtag: string | null;
}

export const endpointsOf = (env: Env, row: Row): { source: Resolved; destination: Resolved } => ({
  source: JSON.parse(unseal(env, row.source)) as Resolved,
  destination: JSON.parse(unseal(env, row.destination)) as Resolved,
});

export const rowOf = (sql: SqlStorage, id: string): Row | null =>
  sql.exec<Row>("SELECT * FROM transfers WHERE transfer_id = ?", id).toArray()[0] ?? null;

export function found(sql: SqlStorage, id: string): Row {
  const row = rowOf(sql, id);
  if (!row) throw new AppError("not_found", `No transfer ${id} here.`);
  return row;
}

export const partsOf = (sql: SqlStorage, id: string): DonePart[] =>
  sql
    .exec<DonePart>("SELECT part_number, size, etag FROM transfer_parts WHERE transfer_id = ? ORDER BY part_number", id)
    .toArray();

export const movedOf = (sql: SqlStorage, row: Row): number =>
  row.status === "completed"
    ? row.bytes_total
    : (sql
        .exec<{ n: number | null }>("SELECT SUM(size) AS n FROM transfer_parts WHERE transfer_id = ?", row.transfer_id)
        .one().n ?? 0);

export function view(sql: SqlStorage, row: Row, now: number): TransferView {
  const moved = movedOf(sql, row);
  const until = row.status === "running" ? now : (row.finished_at ?? row.updated_at);
  const seconds = (until - row.run_started_at) / 1000;
  return {
    transfer_id: row.transfer_id,
    label: row.label,
    status: row.status,
    source: JSON.parse(row.source_view) as TransferView["source"],
    destination: JSON.parse(row.destination_view) as TransferView["destination"],
    content_type: row.content_type,
    bytes_total: row.bytes_total,
    bytes_moved: moved,
    percent:
      row.bytes_total === 0
        ? row.status === "completed"
          ? 100
          : 0
        : Math.floor((moved / row.bytes_total) * 10000) / 100,
    rate_bytes_per_second: seconds > 0 ? Math.round((moved - row.run_start_bytes) / seconds) : null,
    part_bytes: row.part_bytes,
    parts_total: row.parts_total,
    parts_done:
      row.status === "completed"
        ? row.parts_total
        : sql
            .exec<{ n: number }>("SELECT COUNT(*) AS n FROM transfer_parts WHERE transfer_id = ?", row.transfer_id)
            .one().n,
    sha256: row.sha256,
    source_etag: row.source_etag,
    destination_etag: row.destination_etag,
    attempts: row.attempts,
    error: row.error,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    finished_at: isoOrNull(row.finished_at),
  };
}

export function checkRoom(sql: SqlStorage): void {
  if (sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM transfers").one().n >= MAX_TRANSFERS) {
    throw new AppError(
      "storage_full",
      `This resource keeps at most ${MAX_TRANSFERS} transfers: delete finished ones first.`,
    );
  }
}

export function insert(store: EngineStore, s: Started): TransferView {
  checkRoom(store.sql);
  store.sql.exec(
    `INSERT INTO transfers (transfer_id, label, status, source, destination, source_view, destination_view,
      content_type, bytes_total, part_bytes, parts_total, ranged, upload_id, source_etag, attempts, run_started_at,
      created_at, updated_at)
     VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?)`,
    s.transferId,
    s.label,
    seal(store.env, JSON.stringify(s.source)),
    seal(store.env, JSON.stringify(s.destination)),
    JSON.stringify(s.sourceView),
    JSON.stringify(s.destinationView),
    s.contentType,
    s.size,
    s.partBytes,
    s.partsTotal,
    s.ranged ? 1 : 0,
    s.uploadId,
    s.sourceEtag,
    store.now,
    store.now,
    store.now,
  );
  return view(store.sql, found(store.sql, s.transferId), store.now);
}

export function page(sql: SqlStorage, now: number, limit: number, cursor: string | undefined): Page<TransferView> {
  const before = cursor === undefined ? Number.MAX_SAFE_INTEGER : Number(cursor);
  const rows = sql
    .exec<Row>("SELECT * FROM transfers WHERE seq < ? ORDER BY seq DESC LIMIT ?", before, limit + 1)
    .toArray();
  return keysetPage(
    rows,
    limit,
    (r) => r.seq,
    (r) => view(sql, r, now),
  );
}

export const all = (sql: SqlStorage, now: number): TransferView[] =>
  sql
    .exec<Row>("SELECT * FROM transfers ORDER BY seq DESC")
    .toArray()
    .map((r) => view(sql, r, now));

/** Transfers whose destination upload is still open (running or failed): aborted when the resource ends. */
export const openUploads = (sql: SqlStorage): Row[] =>
  sql.exec<Row>("SELECT * FROM transfers WHERE status IN ('running', 'failed') AND upload_id IS NOT NULL").toArray();

export function usage(sql: SqlStorage) {
  const counts = Object.fromEntries(
    sql
      .exec<{ status: string; n: number }>("SELECT status, COUNT(*) AS n FROM transfers GROUP BY status")
      .toArray()
      .map((r) => [r.status, r.n]),
  );
  const bytes =
    sql.exec<{ n: number | null }>("SELECT SUM(bytes_total) AS n FROM transfers WHERE status = 'completed'").one().n ??
    0;
  return {
    running: counts.running ?? 0,
    completed: counts.completed ?? 0,
    failed: counts.failed ?? 0,
    cancelled: counts.cancelled ?? 0,
    bytes_completed: bytes,
  };
}
