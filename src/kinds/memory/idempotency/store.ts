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
 */
import { utf8Length } from "../../../bytes";
import { keysetPage } from "../../../kind/pages";
import { AppError } from "../../../http/errors";
import { iso, isoOrNull } from "../../../time";
import type { Json } from "../../../json";
import type { EngineStore } from "../../../kind/kind";
import { MAX_KEYS, MAX_RESULT_BYTES, MAX_RESULTS_BYTES, type IdempotencyConfig } from "./schema";

type Row = {
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

const newLockToken = () => `lock_${crypto.randomUUID().replace(/-/g, "")}`;

function stateOf(row: Row, now: number): "locked" | "lapsed" | "completed" {
  if (row.completed_at !== null) return "completed";
  return row.lock_expires_at! > now ? "locked" : "lapsed";
}

/** The live row of `key`: an expired one reads as never claimed, and goes if the operation commits. */
function find(store: EngineStore, key: string): Row | null {
  const row = store.sql.exec<Row>("SELECT * FROM idem_keys WHERE key = ?", key).toArray()[0];
  if (!row) return null;
  if (row.expires_at > store.now) return row;
  store.sql.exec("DELETE FROM idem_keys WHERE id = ?", row.id);
  return null;
}

function existing(store: EngineStore, key: string): Row {
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

function lockSeconds(config: IdempotencyConfig, asked: number | undefined): number {
  if (asked !== undefined && asked > config.window_seconds) {
    throw new AppError(
      "validation_failed",
      `lock_seconds may not exceed this resource's window_seconds (${config.window_seconds}).`,
      {
        errors: [{ path: "lock_seconds", message: `must be at most ${config.window_seconds}` }],
      },
    );
  }
  return asked ?? config.lock_timeout_seconds;
}

export interface ClaimInput {
  key: string;
  fingerprint: string;
  lock_seconds?: number;
}

/** `new` or `duplicate`; `mismatch` and `in_flight` are thrown as problems (422, 409) carrying the outcome. */
export function claim(store: EngineStore, config: IdempotencyConfig, input: ClaimInput) {
  const now = store.now;
  const lockUntil = now + lockSeconds(config, input.lock_seconds) * 1000;
  const expiresAt = now + config.window_seconds * 1000;
  const row = find(store, input.key);
  if (!row) {
    const live = store.sql.exec<{ n: number }>("SELECT count(*) AS n FROM idem_keys WHERE expires_at > ?", now).one().n;
    if (live >= MAX_KEYS) {
      throw new AppError(
        "validation_failed",
        `This resource holds ${MAX_KEYS} live keys: delete some, wait for their window to pass, or use ` +
          `another resource.`,
        {
          errors: [{ path: "key", message: `at most ${MAX_KEYS} live keys per resource` }],
        },
      );
    }
    const token = newLockToken();
    store.sql.exec(
      "INSERT INTO idem_keys (key, fingerprint, lock_token, attempts, claimed_at, lock_expires_at, " +
        "expires_at) VALUES (?, ?, ?, 1, ?, ?, ?)",
      input.key,
      input.fingerprint,
      token,
      now,
      lockUntil,
      expiresAt,
    );
    return {
      outcome: "new" as const,
      key: input.key,
      lock_token: token,
      lock_expires_at: iso(lockUntil),
      expires_at: iso(expiresAt),
      attempt: 1,
    };
  }
  // A different request under the same key is a client bug whatever the key's state: say so first.
  if (row.fingerprint !== input.fingerprint) {
    throw new AppError(
      "idempotency_mismatch",
      `Key ${JSON.stringify(input.key)} was claimed for a request with another fingerprint.`,
      {
        extra: { outcome: "mismatch", key: input.key },
      },
    );
  }
  if (row.completed_at !== null) {
    return {
      outcome: "duplicate" as const,
      key: row.key,
      result: JSON.parse(row.result!) as Json,
      completed_at: iso(row.completed_at),
      expires_at: iso(row.expires_at),
    };
  }
  if (row.lock_expires_at! > now) {
    const wait = Math.max(1, Math.ceil((row.lock_expires_at! - now) / 1000));
    throw new AppError(
      "idempotency_in_flight",
      `Key ${JSON.stringify(input.key)} is locked by a claim still in progress; its lock lapses at ` +
        `${iso(row.lock_expires_at!)}.`,
      {
        extra: { outcome: "in_flight", key: input.key, lock_expires_at: iso(row.lock_expires_at!) },
        headers: { "Retry-After": String(wait) },
      },
    );
  }
  // The holder neither stored a result nor released before its lock lapsed (it crashed): take over, with a new token.
  const token = newLockToken();
  const until = Math.max(row.expires_at, expiresAt);
  store.sql.exec(
    "UPDATE idem_keys SET lock_token = ?, attempts = attempts + 1, claimed_at = ?, lock_expires_at = ?, " +
      "expires_at = ? WHERE id = ?",
    token,
    now,
    lockUntil,
    until,
    row.id,
  );
  return {
    outcome: "new" as const,
    key: row.key,
    lock_token: token,
    lock_expires_at: iso(lockUntil),
    expires_at: iso(until),
    attempt: row.attempts + 1,
  };
}

/** The row `key` when `token` is its current attempt's; a taken-over or finished attempt gets 409. */
function heldBy(store: EngineStore, key: string, token: string): Row {
  const row = existing(store, key);
  if (row.lock_token !== token) {
    throw new AppError(
      "conflict",
      `This lock_token is not the current claim of ${JSON.stringify(key)} (its lock lapsed and another ` +
        `claim took the key over, or it belongs to another key).`,
    );
  }
  return row;
}

export function complete(
  store: EngineStore,
  config: IdempotencyConfig,
  input: { key: string; lock_token: string; result: Json },
) {
  const row = heldBy(store, input.key, input.lock_token);
  const text = JSON.stringify(input.result);
  if (row.completed_at !== null) {
    // A retried store (its answer was lost) is harmless; another result for the same request is not.
    if (row.result === text) return view(row, store.now, true);
    throw new AppError("conflict", `Key ${JSON.stringify(input.key)} already holds a different result.`);
  }
  const bytes = utf8Length(text);
  if (bytes > MAX_RESULT_BYTES)
    throw new AppError(
      "payload_too_large",
      `A result may have at most ${MAX_RESULT_BYTES} bytes of JSON; this one has ${bytes}.`,
    );
  const held = store.sql
    .exec<{ n: number }>("SELECT coalesce(sum(result_bytes), 0) AS n FROM idem_keys WHERE expires_at > ?", store.now)
    .one().n;
  if (held + bytes > MAX_RESULTS_BYTES) {
    throw new AppError(
      "payload_too_large",
      `This resource keeps at most ${MAX_RESULTS_BYTES} bytes of results; it holds ${held} and this one has ${bytes}.`,
    );
  }
  // The lock may have lapsed unclaimed: the work was done all the same, so its result counts.
  const expiresAt = Math.max(row.expires_at, store.now + config.window_seconds * 1000);
  store.sql.exec(
    "UPDATE idem_keys SET result = ?, result_bytes = ?, completed_at = ?, lock_expires_at = NULL, " +
      "expires_at = ? WHERE id = ?",
    text,
    bytes,
    store.now,
    expiresAt,
    row.id,
  );
  return view(existing(store, input.key), store.now, true);
}

/** The holder gave up (its work failed and may be retried): the key is forgotten, so the next claim is `new`. */
export function release(store: EngineStore, input: { key: string; lock_token: string }) {
  const row = heldBy(store, input.key, input.lock_token);
  if (row.completed_at !== null)
    throw new AppError(
      "conflict",
      `Key ${JSON.stringify(input.key)} already has its result; delete the key to forget it.`,
    );
  store.sql.exec("DELETE FROM idem_keys WHERE id = ?", row.id);
  return { key: row.key, released: true as const };
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
