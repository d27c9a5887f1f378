/**
 * What an OAuth callback keeps: its secrets (client secret, PKCE verifier) and its one result
 * (tokens or a code, sealed; or the provider's error). The first callback to commit sets it.
 */
import { seal, unseal } from "../../../auth/sealing";
import type { EngineStore } from "../../../kind/kind";
import { isoOrNull } from "../../../time";
import type { JsonObject } from "../../../json";

export const TABLES = [
  // The client secret and PKCE verifier (sealed), and the public values made with them.
  "CREATE TABLE oauth_secrets (id INTEGER PRIMARY KEY CHECK (id = 1), sealed TEXT NOT NULL, redirect_uri " +
    "TEXT NOT NULL, code_challenge TEXT)",
  `CREATE TABLE oauth_result (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    -- pending, completed, error
    status TEXT NOT NULL,
    sealed TEXT,
    error TEXT,
    error_description TEXT,
    completed_at INTEGER
  )`,
];

/** A type, not an interface, so it is JSON as sealCreate hands it to init. */
export type Secrets = {
  client_secret: string | null;
  code_verifier: string | null;
};

/** What the callback brought: tokens or a code (kept sealed), or the provider's error. */
export type Outcome = { tokens: JsonObject } | { code: string } | { error: string; error_description: string | null };

export function saveSecrets(store: EngineStore, secrets: Secrets, codeChallenge: string | null): void {
  store.sql.exec(
    "INSERT INTO oauth_secrets (id, sealed, redirect_uri, code_challenge) VALUES (1, ?, ?, ?)",
    seal(store.env, JSON.stringify(secrets)),
    store.publicUrl,
    codeChallenge,
  );
  store.sql.exec("INSERT INTO oauth_result (id, status) VALUES (1, 'pending')");
}

export function secretsOf(
  env: EngineStore["env"],
  sql: SqlStorage,
): Secrets & { redirect_uri: string; code_challenge: string | null } {
  const row = sql
    .exec<{ sealed: string; redirect_uri: string; code_challenge: string | null }>("SELECT * FROM oauth_secrets")
    .one();
  return {
    ...(JSON.parse(unseal(env, row.sealed)) as Secrets),
    redirect_uri: row.redirect_uri,
    code_challenge: row.code_challenge,
  };
}

export const statusOf = (sql: SqlStorage) =>
  sql.exec<{ status: "pending" | "completed" | "error" }>("SELECT status FROM oauth_result").one().status;

/** Records the outcome if none is yet; answers whether this one did. */
export function record(store: EngineStore, outcome: Outcome): boolean {
  if ("error" in outcome) {
    return (
      store.sql.exec(
        "UPDATE oauth_result SET status = 'error', error = ?, error_description = ?, completed_at = ? " +
          "WHERE status = 'pending'",
        outcome.error,
        outcome.error_description,
        store.now,
      ).rowsWritten > 0
    );
  }
  return (
    store.sql.exec(
      "UPDATE oauth_result SET status = 'completed', sealed = ?, completed_at = ? WHERE status = 'pending'",
      seal(store.env, JSON.stringify(outcome)),
      store.now,
    ).rowsWritten > 0
  );
}

export function result(store: EngineStore) {
  const r = store.sql
    .exec<{
      status: "pending" | "completed" | "error";
      sealed: string | null;
      error: string | null;
      error_description: string | null;
      completed_at: number | null;
    }>("SELECT * FROM oauth_result")
    .one();
  const got = r.sealed ? (JSON.parse(unseal(store.env, r.sealed)) as { tokens?: JsonObject; code?: string }) : {};
  return {
    status: r.status,
    tokens: got.tokens ?? null,
    code: got.code ?? null,
    error: r.error,
    error_description: r.error_description,
    completed_at: isoOrNull(r.completed_at),
  };
}
