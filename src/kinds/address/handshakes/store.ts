/**
 * What a handshake responder keeps beyond its captures (../captures/store.ts): its sealed secrets and the handshakes it
 * answered.
 */
import type { EngineStore } from "../../../kind/kind";
import { iso } from "../../../time";
import type { CaptureLimits } from "../captures/store";
import { HANDSHAKE_LOG, MAX_BYTES, MAX_ITEMS, type Protocol } from "./schema";

export const LIMITS: CaptureLimits = { noun: "address", maxItems: MAX_ITEMS, maxBytes: MAX_BYTES };

export const TABLES = [
  "CREATE TABLE handshake_secrets (id INTEGER PRIMARY KEY CHECK (id = 1), sealed TEXT NOT NULL)",
  "CREATE TABLE handshakes (id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, protocol TEXT NOT NULL)",
];

export function saveSecrets(store: EngineStore, sealed: string): void {
  store.sql.exec("INSERT INTO handshake_secrets (id, sealed) VALUES (1, ?)", sealed);
}

export function sealedSecrets(sql: SqlStorage): string | null {
  return sql.exec<{ sealed: string }>("SELECT sealed FROM handshake_secrets").toArray()[0]?.sealed ?? null;
}

/** Records an answered handshake, keeping the latest HANDSHAKE_LOG. */
export function logHandshake(store: EngineStore, protocol: Protocol): void {
  const id = store.sql
    .exec<{ id: number }>("INSERT INTO handshakes (at, protocol) VALUES (?, ?) RETURNING id", store.now, protocol)
    .one().id;
  store.sql.exec("DELETE FROM handshakes WHERE id <= ?", id - HANDSHAKE_LOG);
}

export const handshakesAnswered = (sql: SqlStorage) =>
  sql
    .exec<{ at: number; protocol: Protocol }>("SELECT at, protocol FROM handshakes ORDER BY id DESC")
    .toArray()
    .map((r) => ({ protocol: r.protocol, at: iso(r.at) }));
