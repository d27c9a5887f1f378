/**
 * The keys of an idempotency resource, one row each, inside its ResourceObject.
 * Every operation runs in one transaction of that object, so of many concurrent
 * claims of one key exactly one sees it absent and takes it.
 *
 * Time is read, never waited on: a lock has lapsed when `lock_expires_at` has
 * passed (the next claim with the same fingerprint takes the key over, with a
 * new token), and a key is forgotten once `expires_at` has passed: from that
 * instant every operation reads it as absent, and the kind's timer deletes the
 * row (an operation that meets it deletes it too, when that operation commits).
 * Claims and what their holders do are claims.ts.
 */
import { keysetPage } from "../../../kind/pages";
import { AppError } from "../../../http/errors";
import { iso, isoOrNull } from "../../../time";
import type { Json } from "../../../json";
import type { EngineStore } from "../../../kind/kind";

export type Row = {
  id: number;
  key: string;
  fingerprint: string;
  lock_token: string | null;
  attempts: number;
  claimed_at: number;
  lock_expires_at: number | null;
  result: string | null;
  result_bytes: number;
  completed_at: number | null;
  expires_at: number;
};

/** The module's tables as the kind's first migration creates them (see the kind's `migrations`). */
export const TABLES = [
  `CREATE TABLE idem_keys (
    id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL UNIQUE, fingerprint TEXT NOT NULL,
    lock_token TEXT, attempts INTEGER NOT NULL, claimed_at INTEGER NOT NULL, lock_expires_at INTEGER,
    result TEXT, result_bytes INTEGER NOT NULL DEFAULT 0, completed_at INTEGER, expires_at INTEGER NOT NULL)`,
  "CREATE INDEX idem_keys_expiry ON idem_keys (expires_at)",
];

function stateOf(row: Row, now: number): "locked" | "lapsed" | "completed" {
  if (row.completed_at !== null) return "completed";
  return row.lock_expires_at! > now ? "locked" : "lapsed";
}

/** The live row of `key`: an expired one reads as never claimed, and goes if the operation commits. */
export function find(store: EngineStore, key: string): Row | null {
  const row = store.sql.exec<Row>("SELECT * FROM idem_keys WHERE key = ?", key).toArray()[0];
  if (!row) return null;
  if (row.expires_at > store.now) return row;
  store.sql.exec("DELETE FROM idem_keys WHERE id = ?", row.id);
  return null;
}

export function existing(store: EngineStore, key: string): Row {
  const row = find(store, key);
  if (!row)
    throw new AppError(
      "not_found",
      `No key ${JSON.stringify(key)} here (never claimed, released, deleted, or forgotten after its window).`,
    );
  return row;
}

export function view(row: Row, now: number, withResult = false) {
  return {
    key: row.key,
    state: stateOf(row, now),
    fingerprint: row.fingerprint,
    attempts: row.attempts,
    claimed_at: iso(row.claimed_at),
    lock_expires_at: isoOrNull(row.lock_expires_at),
    completed_at: isoOrNull(row.completed_at),
    expires_at: iso(row.expires_at),
    result_bytes: row.result_bytes,
    ...(withResult && row.result !== null ? { result: JSON.parse(row.result) as Json } : {}),
  };
}

export function get(store: EngineStore, key: string) {
  return view(existing(store, key), store.now, true);
}

export function remove(store: EngineStore, key: string) {
  const row = existing(store, key);
  store.sql.exec("DELETE FROM idem_keys WHERE id = ?", row.id);
  return { key: row.key, deleted: true as const };
}

const STATE_FILTER = {
  locked: "completed_at IS NULL AND lock_expires_at > ?1",
  lapsed: "completed_at IS NULL AND lock_expires_at <= ?1",
  completed: "completed_at IS NOT NULL",
} as const;

/** Oldest claim first; results are left out (read a key for its result). */
export function list(
  store: EngineStore,
  state: keyof typeof STATE_FILTER | undefined,
  limit: number,
  cursor: string | undefined,
) {
  const filter = state ? `AND ${STATE_FILTER[state]}` : "";
  const rows = store.sql
    .exec<Row>(
      `SELECT * FROM idem_keys WHERE expires_at > ?1 AND id > ?2 ${filter} ORDER BY id LIMIT ?3`,
      store.now,
      Number(cursor ?? 0),
      limit + 1,
    )
    .toArray();
  return keysetPage(
    rows,
    limit,
    (r) => r.id,
    (r) => view(r, store.now),
  );
}

export function usage(store: EngineStore) {
  const u = store.sql
    .exec<{ keys: number; completed: number; result_bytes: number }>(
      "SELECT count(*) AS keys, count(completed_at) AS completed, coalesce(sum(result_bytes), 0) AS " +
        "result_bytes FROM idem_keys WHERE expires_at > ?",
      store.now,
    )
    .one();
  return { keys: u.keys, completed: u.completed, result_bytes: u.result_bytes };
}

export function exportAll(store: EngineStore) {
  const rows = store.sql.exec<Row>("SELECT * FROM idem_keys WHERE expires_at > ? ORDER BY id", store.now).toArray();
  return { keys: rows.map((r) => view(r, store.now, true)) };
}

/** The timer: due at the earliest expiry; forgets every key whose window has passed. */
export const timer = {
  nextDue(store: EngineStore): number | null {
    return store.sql.exec<{ at: number | null }>("SELECT min(expires_at) AS at FROM idem_keys").one().at;
  },
  fire(store: EngineStore): void {
    store.sql.exec("DELETE FROM idem_keys WHERE expires_at <= ?", store.now);
  },
};
