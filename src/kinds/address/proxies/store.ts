/**
 * A proxy's access rules and its request log. The credential is kept as a SHA-256 (it has 190
 * bits of entropy: a fast hash is enough), the injected values sealed; the log keeps the newest
 * LOG_KEPT requests, each completed with the upstream's status once the worker reports it.
 */
import { sha256Hex } from "../../../bytes";
import { encodeBase62 } from "../../../auth/base62";
import { randomBytes } from "../../../auth/ids";
import type { EngineStore } from "../../../kind/kind";
import { iso } from "../../../time";
import { LOG_KEPT, type ProxyConfig } from "./schema";

export const TABLES = [
  "CREATE TABLE proxy_access (id INTEGER PRIMARY KEY CHECK (id = 1), credential_hash TEXT, sealed_inject " +
    "TEXT, tokens REAL, refilled_at INTEGER)",
  `CREATE TABLE proxy_log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at INTEGER NOT NULL,
    method TEXT NOT NULL,
    path TEXT NOT NULL,
    caller_ip TEXT,
    -- credential, ip; null: refused
    via TEXT,
    status INTEGER,
    duration_ms INTEGER
  )`,
  "CREATE TABLE proxy_counts (id INTEGER PRIMARY KEY CHECK (id = 1), passed INTEGER NOT NULL DEFAULT 0, " +
    "denied INTEGER NOT NULL DEFAULT 0, rate_limited INTEGER NOT NULL DEFAULT 0)",
];

/** A new credential: what callers send, and what is kept of it. */
/** `seed`: 24 or more bytes to make it from (a keyed create's, Kind.sealCreate); random without. */
export function newCredential(
  config: Pick<ProxyConfig, "auth" | "basic_username">,
  seed?: Uint8Array,
): {
  shown: Record<string, string>;
  hash: string;
} {
  const secret = encodeBase62(seed ? seed.slice(0, 24) : randomBytes(24));
  if (config.auth === "basic") {
    const authorization = `Basic ${btoa(`${config.basic_username}:${secret}`)}`;
    return {
      shown: { type: "basic", authorization, username: config.basic_username, password: secret },
      hash: sha256Hex(authorization),
    };
  }
  const token = `zvp_${secret}`;
  const authorization = `Bearer ${token}`;
  return { shown: { type: "bearer", authorization, token }, hash: sha256Hex(authorization) };
}

/** What sealCreate set aside: the credential's hash and the sealed injected values. */
export type ProxySealed = {
  credential_hash: string | null;
  sealed_inject: string;
};

export function saveAccess(sql: SqlStorage, sealed: ProxySealed): void {
  sql.exec(
    "INSERT INTO proxy_access (id, credential_hash, sealed_inject) VALUES (1, ?, ?)",
    sealed.credential_hash,
    sealed.sealed_inject,
  );
  sql.exec("INSERT INTO proxy_counts (id) VALUES (1)");
}

export function setCredentialHash(sql: SqlStorage, hash: string): void {
  sql.exec("UPDATE proxy_access SET credential_hash = ?", hash);
}

export const access = (sql: SqlStorage) =>
  sql
    .exec<{ credential_hash: string | null; sealed_inject: string; tokens: number | null; refilled_at: number | null }>(
      "SELECT * FROM proxy_access",
    )
    .one();

/**
 * Takes a request from the per-minute allowance, a token bucket (a minute's worth at most, refilled
 * evenly, so no burst of twice the limit where two windows meet): null when it may pass, else
 * the seconds until it could.
 */
export function overLimit(store: EngineStore, perMinute: number): number | null {
  const a = access(store.sql);
  const perMs = perMinute / 60_000;
  const tokens = Math.min(perMinute, (a.tokens ?? perMinute) + (store.now - (a.refilled_at ?? store.now)) * perMs);
  if (tokens < 1) return Math.max(1, Math.ceil((1 - tokens) / perMs / 1000));
  store.sql.exec("UPDATE proxy_access SET tokens = ?, refilled_at = ?", tokens - 1, store.now);
  return null;
}

export type Outcome = "passed" | "denied" | "rate_limited";

export function logRequest(
  store: EngineStore,
  e: {
    method: string;
    path: string;
    callerIp: string | null;
    via: "credential" | "ip" | null;
    status: number | null;
    outcome: Outcome;
  },
): number {
  store.sql.exec(`UPDATE proxy_counts SET ${e.outcome} = ${e.outcome} + 1`);
  const seq = store.sql
    .exec<{ seq: number }>(
      "INSERT INTO proxy_log (at, method, path, caller_ip, via, status) VALUES (?, ?, ?, ?, ?, ?) RETURNING seq",
      store.now,
      e.method,
      e.path.slice(0, 2048),
      e.callerIp,
      e.via,
      e.status,
    )
    .one().seq;
  store.sql.exec("DELETE FROM proxy_log WHERE seq <= ?", seq - LOG_KEPT);
  return seq;
}

export function logOutcome(sql: SqlStorage, seq: number, status: number, durationMs: number): void {
  sql.exec(
    "UPDATE proxy_log SET status = ?, duration_ms = ? WHERE seq = ? AND status IS NULL",
    status,
    Math.round(durationMs),
    seq,
  );
}

export const counts = (sql: SqlStorage) =>
  sql
    .exec<{ passed: number; denied: number; rate_limited: number }>(
      "SELECT passed, denied, rate_limited FROM proxy_counts",
    )
    .one();

type LogRow = {
  seq: number;
  at: number;
  method: string;
  path: string;
  caller_ip: string | null;
  via: "credential" | "ip" | null;
  status: number | null;
  duration_ms: number | null;
};
const view = (r: LogRow) => ({ ...r, at: iso(r.at) });

/** Newest first; `cursor`: the seq the previous page ended above. */
export function logPage(sql: SqlStorage, cursor: number | null, limit: number) {
  const rows = sql
    .exec<LogRow>(
      "SELECT * FROM proxy_log WHERE seq < ? ORDER BY seq DESC LIMIT ?",
      cursor ?? Number.MAX_SAFE_INTEGER,
      limit + 1,
    )
    .toArray();
  const page = rows.slice(0, limit);
  return { items: page.map(view), next_cursor: rows.length > limit ? String(page[page.length - 1]!.seq) : null };
}

export const allLog = (sql: SqlStorage) => sql.exec<LogRow>("SELECT * FROM proxy_log ORDER BY seq").toArray().map(view);
