/**
 * The one secret of a secrets resource, in one row. Revealing or burning it clears the
 * ciphertext and the passphrase verifier in the same transaction that records when;
 * from then on the row says only what happened. A passphrase-protected secret counts
 * wrong attempts and burns itself at the limit.
 */
import type { JsonObject } from "../../../json";
import type { EngineStore } from "../../../kind/kind";
import { isoOrNull } from "../../../time";
import type { SealedSecret, Verifier } from "./crypto";
import type { SecretStatus } from "./schema";

export type SecretRow = {
  sealed: string | null;
  bytes: number;
  has_passphrase: number;
  salt: string | null;
  verifier: string | null;
  iterations: number | null;
  max_attempts: number;
  failed_attempts: number;
  read_at: number | null;
  burned_at: number | null;
  burn_reason: "owner" | "passphrase_attempts" | null;
};

/** The module's tables as the kind's first migration creates them (see the kind's `migrations`). */
export const TABLES = [
  `CREATE TABLE secret (id INTEGER PRIMARY KEY CHECK (id = 1),
    -- The value, sealed (auth/sealing.ts) and, with a passphrase, encrypted under its key first;
    -- NULL once read or burned.
    sealed TEXT, bytes INTEGER NOT NULL,
    -- The passphrase's PBKDF2 salt and verifier (crypto.ts), never the passphrase; NULL once read or burned.
    has_passphrase INTEGER NOT NULL, salt TEXT, verifier TEXT, iterations INTEGER,
    max_attempts INTEGER NOT NULL, failed_attempts INTEGER NOT NULL DEFAULT 0,
    read_at INTEGER, burned_at INTEGER, burn_reason TEXT)`,
];

export function initSecret(store: EngineStore, s: SealedSecret): void {
  const p = s.passphrase;
  store.sql.exec(
    "INSERT INTO secret (id, sealed, bytes, has_passphrase, salt, verifier, iterations, max_attempts) " +
      "VALUES (1, ?, ?, ?, ?, ?, ?, ?)",
    s.sealed,
    s.bytes,
    p ? 1 : 0,
    p?.salt ?? null,
    p?.verifier ?? null,
    p?.iterations ?? null,
    s.max_attempts,
  );
}

export function readSecret(sql: SqlStorage): SecretRow {
  return sql.exec<SecretRow>("SELECT * FROM secret").one();
}

export const verifierOf = (row: SecretRow): Verifier | null =>
  row.salt !== null && row.verifier !== null && row.iterations !== null
    ? { salt: row.salt, verifier: row.verifier, iterations: row.iterations }
    : null;

export function statusOf(row: SecretRow): SecretStatus {
  return {
    state: row.read_at !== null ? "read" : row.burned_at !== null ? "burned" : "unread",
    read: row.read_at !== null,
    read_at: isoOrNull(row.read_at),
    burned_at: isoOrNull(row.burned_at),
    burn_reason: row.burn_reason,
    passphrase_required: row.has_passphrase === 1,
    failed_passphrase_attempts: row.failed_attempts,
    max_passphrase_attempts: row.max_attempts,
  };
}

export const secretStatusView = (store: EngineStore): SecretStatus => statusOf(readSecret(store.sql));

export function usageOf(store: EngineStore): JsonObject {
  const row = readSecret(store.sql);
  return { reads: row.read_at === null ? 0 : 1, failed_passphrase_attempts: row.failed_attempts };
}

const CLEAR = "sealed = NULL, salt = NULL, verifier = NULL";

/** Takes the sealed value out for its one reveal (null: it is gone already). */
export function release(store: EngineStore): { sealed: string; readAt: number } | null {
  const row = readSecret(store.sql);
  if (row.sealed === null) return null;
  store.sql.exec(`UPDATE secret SET ${CLEAR}, read_at = ?`, store.now);
  return { sealed: row.sealed, readAt: store.now };
}

/** Destroys the value unread; a secret already read or burned stays as it is. */
export function burn(store: EngineStore, reason: "owner" | "passphrase_attempts"): void {
  store.sql.exec(
    `UPDATE secret SET ${CLEAR}, burned_at = ?, burn_reason = ? WHERE sealed IS NOT NULL`,
    store.now,
    reason,
  );
}

/** Counts a wrong passphrase; at the limit the secret burns. Returns the attempts left. */
export function failAttempt(store: EngineStore): number {
  store.sql.exec("UPDATE secret SET failed_attempts = failed_attempts + 1 WHERE sealed IS NOT NULL");
  const row = readSecret(store.sql);
  const left = Math.max(0, row.max_attempts - row.failed_attempts);
  if (left === 0) burn(store, "passphrase_attempts");
  return left;
}
