/**
 * A stable address's current target and its buffer: the requests that came while there was
 * none, replayed to the next target one at a time, in arrival order. Each replay is a delivery
 * of the pipeline (signed, retried until a 2xx); the next starts when it settles, in the same
 * transaction as its end is recorded (onDeliveryFinished), so a crash cannot stall the chain.
 */
import { AppError } from "../../../http/errors";
import { belowTarget } from "../forwarding";
import type { EngineStore } from "../../../kind/kind";
import { iso, isoOrNull } from "../../../time";
import { MAX_BUFFERED, MAX_BUFFERED_BYTES, type BufferStatus, type StableConfig } from "./schema";

export const TABLES = [
  `CREATE TABLE stable_target (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    target_url TEXT,
    mode TEXT NOT NULL,
    forward_path INTEGER NOT NULL,
    set_at INTEGER,
    proxied INTEGER NOT NULL DEFAULT 0,
    redirected INTEGER NOT NULL DEFAULT 0
  )`,
  `CREATE TABLE stable_buffer (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    received_at INTEGER NOT NULL,
    method TEXT NOT NULL,
    -- below the address, and the query as sent (rows kept before it was, re-encoded)
    path TEXT NOT NULL,
    query TEXT NOT NULL,
    headers TEXT NOT NULL,
    -- inline text, or an R2 key (shared with the replay's delivery, which deletes it once settled)
    body_text TEXT,
    body_key TEXT,
    size INTEGER NOT NULL,
    -- waiting, replaying, delivered, dead
    status TEXT NOT NULL,
    delivery_id TEXT
  )`,
  "CREATE INDEX stable_buffer_status ON stable_buffer (status, seq)",
];

export interface Target {
  target_url: string | null;
  mode: StableConfig["mode"];
  forward_path: boolean;
}

type TargetRow = {
  target_url: string | null;
  mode: Target["mode"];
  forward_path: number;
  set_at: number | null;
  proxied: number;
  redirected: number;
};

const targetRow = (sql: SqlStorage) => sql.exec<TargetRow>("SELECT * FROM stable_target").one();

export function targetOf(sql: SqlStorage): Target {
  const row = targetRow(sql);
  return { target_url: row.target_url, mode: row.mode, forward_path: row.forward_path === 1 };
}

export function setTarget(store: EngineStore, target: Target): void {
  store.sql.exec(
    "INSERT INTO stable_target (id, target_url, mode, forward_path, set_at) VALUES (1, ?, ?, ?, ?) ON " +
      "CONFLICT (id) DO UPDATE SET target_url = excluded.target_url, mode = excluded.mode, forward_path = " +
      "excluded.forward_path, set_at = excluded.set_at",
    target.target_url,
    target.mode,
    target.forward_path ? 1 : 0,
    target.target_url ? store.now : null,
  );
  replayNext(store);
}

export function countPassed(sql: SqlStorage, how: "proxied" | "redirected"): void {
  sql.exec(`UPDATE stable_target SET ${how} = ${how} + 1`);
}

/**
 * The URL a request goes to: the target, with (when forward_path) the path below the address
 * appended to its path and the query to its query.
 */
export function targetFor(target: Target & { target_url: string }, path: string, query: string): string {
  return target.forward_path ? belowTarget(target.target_url, path, query) : target.target_url;
}

export interface Buffered {
  receivedAt: number;
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  body: { text: string } | { key: string } | null;
  size: number;
}

/** Keeps a request for the next target (507 when the buffer is full), and starts replaying if there is one. */
export function buffer(store: EngineStore, r: Buffered): number {
  const held = store.sql
    .exec<{ n: number; bytes: number | null }>(
      "SELECT COUNT(*) AS n, SUM(size) AS bytes FROM stable_buffer WHERE status IN ('waiting', 'replaying')",
    )
    .one();
  if (held.n >= MAX_BUFFERED || (held.bytes ?? 0) + r.size > MAX_BUFFERED_BYTES) {
    throw new AppError(
      "storage_full",
      `No target is set and the buffer is full (${MAX_BUFFERED} requests, ${MAX_BUFFERED_BYTES}` +
        ` bytes); nothing was kept.`,
    );
  }
  const body = r.body;
  const seq = store.sql
    .exec<{ seq: number }>(
      "INSERT INTO stable_buffer (received_at, method, path, query, headers, body_text, body_key, size, " +
        "status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'waiting') RETURNING seq",
      r.receivedAt,
      r.method,
      r.path,
      r.query,
      JSON.stringify(r.headers),
      body && "text" in body ? body.text : null,
      body && "key" in body ? body.key : null,
      r.size,
    )
    .one().seq;
  replayNext(store);
  return seq;
}

type BufferRow = {
  seq: number;
  received_at: number;
  method: string;
  path: string;
  query: string;
  headers: string;
  body_text: string | null;
  body_key: string | null;
  size: number;
  status: BufferStatus;
  delivery_id: string | null;
};

/** Sends the oldest waiting request to the target, unless one is under way (or there is no target). */
function replayNext(store: EngineStore): void {
  const target = targetOf(store.sql);
  if (!target.target_url) return;
  if (store.sql.exec("SELECT 1 FROM stable_buffer WHERE status = 'replaying' LIMIT 1").toArray().length) return;
  const next = store.sql
    .exec<BufferRow>("SELECT * FROM stable_buffer WHERE status = 'waiting' ORDER BY seq LIMIT 1")
    .toArray()[0];
  if (!next) return;
  const deliveryId = store.send({
    url: targetFor({ ...target, target_url: target.target_url }, next.path, next.query),
    method: next.method as "POST",
    headers: JSON.parse(next.headers) as Record<string, string>,
    body: next.body_key ? { key: next.body_key } : next.body_text,
    eventType: "stable.replay",
  });
  store.sql.exec(
    "UPDATE stable_buffer SET status = 'replaying', delivery_id = ?, body_text = NULL WHERE seq = ?",
    deliveryId,
    next.seq,
  );
}

/** A replay settled: the next one starts. */
export function replayFinished(
  store: EngineStore,
  deliveryId: string,
  outcome: "delivered" | "aborted" | "dead",
): void {
  const status: BufferStatus = outcome === "delivered" ? "delivered" : "dead";
  store.sql.exec(
    "UPDATE stable_buffer SET status = ? WHERE delivery_id = ? AND status = 'replaying'",
    status,
    deliveryId,
  );
  replayNext(store);
}

/** Drops the waiting requests (their stored bodies too); replays under way finish. */
export function clearWaiting(store: EngineStore): number {
  const keys = store.sql
    .exec<{ body_key: string | null }>("SELECT body_key FROM stable_buffer WHERE status = 'waiting'")
    .toArray()
    .flatMap((r) => (r.body_key ? [r.body_key] : []));
  store.dropObjects(keys);
  return store.sql.exec("DELETE FROM stable_buffer WHERE status = 'waiting'").rowsWritten;
}

export function counts(sql: SqlStorage) {
  const out = { waiting: 0, replaying: 0, delivered: 0, dead: 0, bytes: 0 };
  for (const r of sql
    .exec<{ status: BufferStatus; n: number; bytes: number }>(
      "SELECT status, COUNT(*) AS n, SUM(size) AS bytes FROM stable_buffer GROUP BY status",
    )
    .toArray()) {
    out[r.status] = r.n;
    if (r.status === "waiting") out.bytes = r.bytes;
  }
  return out;
}

export function info(sql: SqlStorage) {
  const row = targetRow(sql);
  return {
    target_url: row.target_url,
    mode: row.mode,
    forward_path: row.forward_path === 1,
    target_set_at: isoOrNull(row.set_at),
    proxied: row.proxied,
    redirected: row.redirected,
    buffered: counts(sql),
  };
}

const view = (r: BufferRow) => ({
  seq: r.seq,
  received_at: iso(r.received_at),
  method: r.method,
  path: r.query ? `${r.path}?${r.query}` : r.path,
  size: r.size,
  status: r.status,
  delivery_id: r.delivery_id,
});

export function bufferPage(sql: SqlStorage, status: BufferStatus | undefined, cursor: number, limit: number) {
  const rows = sql
    .exec<BufferRow>(
      `SELECT * FROM stable_buffer WHERE seq > ? ${status ? "AND status = ?" : ""} ORDER BY seq LIMIT ?`,
      ...(status ? [cursor, status, limit + 1] : [cursor, limit + 1]),
    )
    .toArray();
  const page = rows.slice(0, limit);
  return { items: page.map(view), next_cursor: rows.length > limit ? String(page[page.length - 1]!.seq) : null };
}

export const allBuffered = (sql: SqlStorage) =>
  sql.exec<BufferRow>("SELECT * FROM stable_buffer ORDER BY seq").toArray().map(view);
