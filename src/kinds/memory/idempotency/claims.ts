/**
 * Claiming a key, and what its holder does with it: store the result, or release the key to be claimed anew. The
 * holder proves itself by the lock token of the current attempt (store.ts keeps the rows and their reads).
 */
import { utf8Length } from "../../../bytes";
import { AppError } from "../../../http/errors";
import { iso } from "../../../time";
import type { Json } from "../../../json";
import type { EngineStore } from "../../../kind/kind";
import { MAX_KEYS, MAX_RESULT_BYTES, MAX_RESULTS_BYTES, type IdempotencyConfig } from "./schema";
import { existing, find, view, type Row } from "./store";

const newLockToken = () => `lock_${crypto.randomUUID().replace(/-/g, "")}`;

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
