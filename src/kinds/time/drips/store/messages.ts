/**
 * A drip's messages and its counters. Counts by status are kept in the state
 * row rather than counted, because the timer asks for them on every alarm and
 * operation and a count over a 10,000-message backlog would read every row.
 * Every status change goes through `move`, which keeps them in step.
 * Finished messages are kept for listing and export up to MAX_KEPT(_BYTES);
 * the oldest are forgotten beyond that. Messages are queued by enqueue.ts.
 */
import { keysetPage } from "../../../../kind/pages";
import { AppError } from "../../../../http/errors";
import type { EngineStore } from "../../../../kind/kind";
import { iso, isoOrNull } from "../../../../time";
import { MAX_KEPT, MAX_KEPT_BYTES, type DripConfig, type MessageStatus } from "../schema";

export type MessageRow = {
  seq: number;
  message_id: string;
  dedup_id: string | null;
  body: string | null;
  headers: string;
  bytes: number;
  status: MessageStatus;
  delivery_id: string | null;
  created_at: number;
  released_at: number | null;
  finished_at: number | null;
};

export type State = {
  paused: number;
  rate_count: number;
  period_ms: number;
  max_parallel: number;
  pending: number;
  in_flight: number;
  delivered: number;
  failed: number;
  cancelled: number;
  backlog_bytes: number;
  kept: number;
  kept_bytes: number;
};

const FINISHED: readonly MessageStatus[] = ["delivered", "failed", "cancelled"];

/** The module's tables as the kind's first migration creates them (see the kind's `migrations`). */
export const TABLES = [
  `CREATE TABLE drip_state (id INTEGER PRIMARY KEY CHECK (id = 1),
    paused INTEGER NOT NULL, rate_count INTEGER NOT NULL, period_ms INTEGER NOT NULL, max_parallel INTEGER NOT NULL,
    pending INTEGER NOT NULL DEFAULT 0, in_flight INTEGER NOT NULL DEFAULT 0, delivered INTEGER NOT NULL DEFAULT 0,
    failed INTEGER NOT NULL DEFAULT 0, cancelled INTEGER NOT NULL DEFAULT 0,
    backlog_bytes INTEGER NOT NULL DEFAULT 0, kept INTEGER NOT NULL DEFAULT 0, kept_bytes INTEGER NOT NULL DEFAULT 0)`,
  `CREATE TABLE drip_messages (seq INTEGER PRIMARY KEY AUTOINCREMENT, message_id TEXT NOT NULL UNIQUE, dedup_id TEXT,
    body TEXT, headers TEXT NOT NULL, bytes INTEGER NOT NULL, status TEXT NOT NULL, delivery_id TEXT,
    created_at INTEGER NOT NULL, released_at INTEGER, finished_at INTEGER)`,
  // A cancelled message gives its dedup_id back, so the same message can be queued anew.
  "CREATE UNIQUE INDEX drip_dedup ON drip_messages (dedup_id) WHERE dedup_id IS NOT NULL AND status <> 'cancelled'",
  "CREATE INDEX drip_by_status ON drip_messages (status, seq)",
  "CREATE INDEX drip_by_delivery ON drip_messages (delivery_id) WHERE delivery_id IS NOT NULL",
  "CREATE INDEX drip_finished ON drip_messages (seq) WHERE finished_at IS NOT NULL",
  // The sliding window: when each recent release went out (rows older than the period are dropped).
  "CREATE TABLE drip_releases (at INTEGER NOT NULL)",
  "CREATE INDEX drip_releases_at ON drip_releases (at)",
];

export function init(store: EngineStore, config: DripConfig): void {
  store.sql.exec(
    "INSERT INTO drip_state (id, paused, rate_count, period_ms, max_parallel) VALUES (1, ?, ?, ?, ?)",
    config.paused ? 1 : 0,
    config.rate.count,
    config.rate.period_seconds * 1000,
    config.max_parallel,
  );
}

export function state(store: EngineStore): State {
  return store.sql.exec<State>("SELECT * FROM drip_state").one();
}

const isFinished = (s: MessageStatus | null) => s !== null && FINISHED.includes(s);

/** Moves a message from one status to another (null: it is new), keeping the counters and timestamps in step. */
export function move(
  store: EngineStore,
  row: Pick<MessageRow, "seq" | "bytes">,
  from: MessageStatus | null,
  to: MessageStatus,
  deliveryId?: string,
): void {
  const finishing = isFinished(to) && !isFinished(from);
  // Column names come from the status enum; amounts are bound.
  const sets = [`${to} = ${to} + 1`];
  const args: number[] = [];
  if (from) sets.push(`${from} = ${from} - 1`);
  if (from === null) {
    sets.push("backlog_bytes = backlog_bytes + ?");
    args.push(row.bytes);
  }
  if (finishing) {
    sets.push("backlog_bytes = backlog_bytes - ?", "kept = kept + 1", "kept_bytes = kept_bytes + ?");
    args.push(row.bytes, row.bytes);
  }
  store.sql.exec(`UPDATE drip_state SET ${sets.join(", ")}`, ...args);
  if (from === null) return;
  if (to === "in_flight")
    store.sql.exec(
      "UPDATE drip_messages SET status = ?, delivery_id = ?, released_at = ? WHERE seq = ?",
      to,
      deliveryId ?? null,
      store.now,
      row.seq,
    );
  else
    store.sql.exec(
      "UPDATE drip_messages SET status = ?, finished_at = coalesce(finished_at, ?) WHERE seq = ?",
      to,
      store.now,
      row.seq,
    );
  if (finishing) prune(store);
}

/** Forgets the oldest finished messages beyond what a drip keeps. */
function prune(store: EngineStore): void {
  let s = state(store);
  while (s.kept > MAX_KEPT || s.kept_bytes > MAX_KEPT_BYTES) {
    const old = store.sql
      .exec<{ seq: number; bytes: number }>(
        "SELECT seq, bytes FROM drip_messages WHERE finished_at IS NOT NULL ORDER BY seq LIMIT 100",
      )
      .toArray();
    if (old.length === 0) return;
    let kept = s.kept;
    let bytes = s.kept_bytes;
    for (const o of old) {
      if (kept <= MAX_KEPT && bytes <= MAX_KEPT_BYTES) break;
      store.sql.exec("DELETE FROM drip_messages WHERE seq = ?", o.seq);
      kept -= 1;
      bytes -= o.bytes;
    }
    store.sql.exec("UPDATE drip_state SET kept = ?, kept_bytes = ?", kept, bytes);
    s = state(store);
  }
}

export function view(row: MessageRow, deduplicated?: boolean) {
  const at = (ms: number | null) => isoOrNull(ms);
  return {
    message_id: row.message_id,
    dedup_id: row.dedup_id,
    status: row.status,
    bytes: row.bytes,
    delivery_id: row.delivery_id,
    created_at: iso(row.created_at),
    released_at: at(row.released_at),
    finished_at: at(row.finished_at),
    ...(deduplicated ? { deduplicated } : {}),
  };
}

export const detail = (row: MessageRow) => ({
  ...view(row),
  body: row.body,
  headers: JSON.parse(row.headers) as Record<string, string>,
});

export const bySeq = (store: EngineStore, seq: number) =>
  store.sql.exec<MessageRow>("SELECT * FROM drip_messages WHERE seq = ?", seq).one();

export function byId(store: EngineStore, messageId: string): MessageRow {
  const row = store.sql.exec<MessageRow>("SELECT * FROM drip_messages WHERE message_id = ?", messageId).toArray()[0];
  if (!row)
    throw new AppError(
      "not_found",
      `No message ${messageId} on this drip (finished messages are kept up to ${MAX_KEPT}).`,
    );
  return row;
}

export function list(store: EngineStore, status: MessageStatus | undefined, limit: number, cursor: string | undefined) {
  const rows = store.sql
    .exec<MessageRow>(
      "SELECT * FROM drip_messages WHERE seq > ? AND (? IS NULL OR status = ?) ORDER BY seq LIMIT ?",
      Number(cursor ?? 0),
      status ?? null,
      status ?? null,
      limit + 1,
    )
    .toArray();
  return keysetPage(
    rows,
    limit,
    (r) => r.seq,
    (r) => view(r),
  );
}

export function cancel(store: EngineStore, messageId: string) {
  const row = byId(store, messageId);
  if (row.status !== "pending")
    throw new AppError("conflict", `Message ${messageId} is ${row.status}; only pending messages can be cancelled.`);
  move(store, row, "pending", "cancelled");
  return view(bySeq(store, row.seq));
}

/** Cancels every pending message (in flight ones finish their delivery). */
export function purge(store: EngineStore) {
  let cancelled = 0;
  for (;;) {
    const rows = store.sql
      .exec<{ seq: number; bytes: number }>(
        "SELECT seq, bytes FROM drip_messages WHERE status = 'pending' ORDER BY seq LIMIT 500",
      )
      .toArray();
    if (rows.length === 0) return { cancelled };
    for (const row of rows) move(store, row, "pending", "cancelled");
    cancelled += rows.length;
  }
}

/**
 * The delivery pipeline settled a released message: its slot is free. A message already
 * finished can be reported again after a manual retry from the deliveries log.
 */
export function finished(store: EngineStore, deliveryId: string, outcome: "delivered" | "aborted" | "dead"): void {
  const row = store.sql.exec<MessageRow>("SELECT * FROM drip_messages WHERE delivery_id = ?", deliveryId).toArray()[0];
  if (!row) return; // forgotten meanwhile, or not a message's delivery
  const to: MessageStatus = outcome === "delivered" ? "delivered" : "failed";
  // A failed message retried by hand may still be delivered; a delivered one stays delivered.
  if (row.status === "in_flight" || (row.status === "failed" && to === "delivered")) move(store, row, row.status, to);
}

export function exportAll(store: EngineStore) {
  return store.sql.exec<MessageRow>("SELECT * FROM drip_messages ORDER BY seq").toArray().map(detail);
}
