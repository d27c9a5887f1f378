/**
 * A vault's keys inside its ResourceObject. Every hot path is an index lookup: the key
 * is the primary key, expiry has its own partial index, and the counts (keys, bytes)
 * and the write sequence live in a one-row state table kept in step by every write,
 * so nothing ever counts or sums the whole table.
 *
 * Versions come from one sequence per vault (like etcd's revisions): each write takes
 * the next number, so a key's version never repeats, even after a delete and re-create,
 * and a compare-and-set cannot be fooled by a key that came back (ABA).
 *
 * TTL: a key past its expires_at is invisible at once to every read and write; the
 * kind's timer (the resource alarm) purges expired rows at the earliest expiry, and a
 * write that would exceed a limit purges first, so dead keys never count against it.
 */
import { AppError } from "../../../http/errors";
import type { Json, JsonObject } from "../../../json";
import type { EngineStore } from "../../../kind/kind";
import { iso, isoOrNull } from "../../../time";
import { serialized } from "./bytes";
import { utf8Length } from "../../../bytes";
import { MAX_KEYS, MAX_METADATA_BYTES, MAX_VALUE_BYTES, MAX_VAULT_BYTES, type Entry, type EntryInfo } from "./schema";

export type KeyRow = {
  key: string;
  version: number;
  bytes: number;
  metadata: string | null;
  updated_at: number;
  expires_at: number | null;
};
type State = { seq: number; keys: number; bytes: number };

/** Expired rows removed per purge (an alarm run or a write short of room), so no single call runs long. */
const PURGE_CHUNK = 1000;

/** Columns without the value, which comes last in the row so listings never read its overflow pages. */
export const INFO_COLUMNS = "key, version, bytes, metadata, updated_at, expires_at";
/** The SQL test of a row being alive at `?` (now). */
export const ALIVE = "(expires_at IS NULL OR expires_at > ?)";

/** The module's tables as the kind's first migration creates them (see the kind's `migrations`). */
export const TABLES = [
  `CREATE TABLE vault_keys (key TEXT PRIMARY KEY, version INTEGER NOT NULL, bytes INTEGER NOT NULL,
    metadata TEXT, updated_at INTEGER NOT NULL, expires_at INTEGER, value TEXT NOT NULL)`,
  "CREATE INDEX vault_keys_expiry ON vault_keys (expires_at) WHERE expires_at IS NOT NULL",
  "CREATE TABLE vault_state (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL, keys INTEGER NOT " +
    "NULL, bytes INTEGER NOT NULL)",
];

export function initVault(store: EngineStore): void {
  store.sql.exec("INSERT INTO vault_state (id, seq, keys, bytes) VALUES (1, 0, 0, 0)");
}

function state(store: EngineStore): State {
  return store.sql.exec<State>("SELECT seq, keys, bytes FROM vault_state").one();
}

export function infoOf(row: KeyRow): EntryInfo {
  return {
    key: row.key,
    version: row.version,
    bytes: row.bytes,
    metadata: row.metadata === null ? null : (JSON.parse(row.metadata) as JsonObject),
    updated_at: iso(row.updated_at),
    expires_at: isoOrNull(row.expires_at),
  };
}

export function entryOf(row: KeyRow & { value: string }): Entry {
  return { ...infoOf(row), value: JSON.parse(row.value) as Json };
}

/** The row of a live key (stored, not expired), or null. */
export function liveRow(store: EngineStore, key: string): KeyRow | null {
  return (
    store.sql
      .exec<KeyRow>(`SELECT ${INFO_COLUMNS} FROM vault_keys WHERE key = ? AND ${ALIVE}`, key, store.now)
      .toArray()[0] ?? null
  );
}

export function readEntry(store: EngineStore, key: string): Entry | null {
  const row = store.sql
    .exec<KeyRow & { value: string }>(
      `SELECT ${INFO_COLUMNS}, value FROM vault_keys WHERE key = ? AND ${ALIVE}`,
      key,
      store.now,
    )
    .toArray()[0];
  return row ? entryOf(row) : null;
}

export interface Write {
  key: string;
  value: Json;
  metadata?: JsonObject | null;
  ttl_seconds?: number | null;
}

/**
 * The row a write will store, sized and checked against the per-key limits (before any change).
 * `at`: where the write sits in a batch ("operations.3"), for the error's message and path.
 */
export function prepareWrite(store: EngineStore, w: Write, at?: string) {
  const label = at ? `${at}: ` : "";
  const value = serialized(w.value);
  if (value.bytes > MAX_VALUE_BYTES) {
    throw new AppError(
      "payload_too_large",
      `${label}The value is ${value.bytes} bytes as compact JSON; a vault value may have at most ${MAX_VALUE_BYTES}.`,
    );
  }
  const metadata = w.metadata ? serialized(w.metadata) : null;
  if (metadata && metadata.bytes > MAX_METADATA_BYTES) {
    throw new AppError(
      "validation_failed",
      `${label}metadata is ${metadata.bytes} bytes as JSON; at most ${MAX_METADATA_BYTES} are kept.`,
      {
        errors: [
          { path: at ? `${at}.metadata` : "metadata", message: `must be at most ${MAX_METADATA_BYTES} bytes as JSON` },
        ],
      },
    );
  }
  return {
    key: w.key,
    value: value.text,
    metadata: metadata?.text ?? null,
    bytes: utf8Length(w.key) + value.bytes + (metadata?.bytes ?? 0),
    expires_at: w.ttl_seconds ? store.now + w.ttl_seconds * 1000 : null,
  };
}

type PreparedWrite = ReturnType<typeof prepareWrite>;

/** Any stored row of `key`, alive or expired (a write replaces either). */
function storedRow(
  store: EngineStore,
  key: string,
): { version: number; bytes: number; expires_at: number | null } | null {
  return (
    store.sql
      .exec<{ version: number; bytes: number; expires_at: number | null }>(
        "SELECT version, bytes, expires_at FROM vault_keys WHERE key = ?",
        key,
      )
      .toArray()[0] ?? null
  );
}

/** Writes a checked row (the caller tested its precondition), keeping the counts and the sequence in step. */
export function writeRow(store: EngineStore, row: PreparedWrite): KeyRow & { created: boolean } {
  const old = storedRow(store, row.key);
  const s = state(store);
  const version = s.seq + 1;
  const keys = s.keys + (old ? 0 : 1);
  const bytes = s.bytes - (old?.bytes ?? 0) + row.bytes;
  store.sql.exec(
    `INSERT INTO vault_keys (key, version, bytes, metadata, updated_at, expires_at, value) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (key) DO UPDATE SET version = excluded.version, bytes = excluded.bytes, metadata = excluded.metadata,
       updated_at = excluded.updated_at, expires_at = excluded.expires_at, value = excluded.value`,
    row.key,
    version,
    row.bytes,
    row.metadata,
    store.now,
    row.expires_at,
    row.value,
  );
  store.sql.exec("UPDATE vault_state SET seq = ?, keys = ?, bytes = ?", version, keys, bytes);
  const created = !old || (old.expires_at !== null && old.expires_at <= store.now);
  return {
    key: row.key,
    version,
    bytes: row.bytes,
    metadata: row.metadata,
    updated_at: store.now,
    expires_at: row.expires_at,
    created,
  };
}

/** Deletes a key's row if it is stored (alive or not); returns whether one was. Deletes take a sequence number too. */
export function deleteRow(store: EngineStore, key: string): boolean {
  const old = storedRow(store, key);
  if (!old) return false;
  store.sql.exec("DELETE FROM vault_keys WHERE key = ?", key);
  store.sql.exec("UPDATE vault_state SET seq = seq + 1, keys = keys - 1, bytes = bytes - ?", old.bytes);
  return true;
}

/** Removes up to PURGE_CHUNK expired rows, earliest first; returns how many. */
export function purgeExpired(store: EngineStore): number {
  const gone = store.sql
    .exec<{ bytes: number }>(
      `DELETE FROM vault_keys WHERE key IN (SELECT key FROM vault_keys WHERE expires_at <= ? ORDER BY ` +
        `expires_at LIMIT ${PURGE_CHUNK}) RETURNING bytes`,
      store.now,
    )
    .toArray();
  if (gone.length === 0) return 0;
  store.sql.exec(
    "UPDATE vault_state SET keys = keys - ?, bytes = bytes - ?",
    gone.length,
    gone.reduce((sum, r) => sum + r.bytes, 0),
  );
  return gone.length;
}

/** Expired rows not purged yet (the index holds them in expiry order, so this reads only those). */
function expiredTotals(store: EngineStore): { n: number; bytes: number } {
  const r = store.sql
    .exec<{ n: number; bytes: number | null }>(
      "SELECT COUNT(*) AS n, SUM(bytes) AS bytes FROM vault_keys WHERE expires_at <= ?",
      store.now,
    )
    .one();
  return { n: r.n, bytes: r.bytes ?? 0 };
}

/** Live keys and bytes, the write sequence, and the next expiry. */
export function totals(store: EngineStore): {
  keys: number;
  bytes: number;
  version: number;
  next_expiry_at: string | null;
} {
  const s = state(store);
  const dead = expiredTotals(store);
  const next = nextExpiry(store);
  return { keys: s.keys - dead.n, bytes: s.bytes - dead.bytes, version: s.seq, next_expiry_at: isoOrNull(next) };
}

/** The earliest expiry of any stored row (past ones included: the timer purges them). */
export function nextExpiry(store: EngineStore): number | null {
  return store.sql
    .exec<{ at: number | null }>("SELECT MIN(expires_at) AS at FROM vault_keys WHERE expires_at IS NOT NULL")
    .one().at;
}

/**
 * Refuses (413) when the vault would hold more than its limits after the writes of one call.
 * Expired rows are purged first when the limit seems reached, so they never take room.
 */
export function checkRoom(store: EngineStore): void {
  let s = state(store);
  if (s.keys <= MAX_KEYS && s.bytes <= MAX_VAULT_BYTES) return;
  while (purgeExpired(store) > 0) {
    s = state(store);
    if (s.keys <= MAX_KEYS && s.bytes <= MAX_VAULT_BYTES) return;
  }
  if (s.keys > MAX_KEYS)
    throw new AppError("payload_too_large", `A vault holds at most ${MAX_KEYS} keys; delete some first.`);
  throw new AppError(
    "payload_too_large",
    `A vault holds at most ${MAX_VAULT_BYTES} bytes of keys, values and metadata; this write would make it ${s.bytes}.`,
  );
}
