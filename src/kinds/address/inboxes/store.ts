/** What an inbox keeps beyond its captures (../captures/store.ts): the sealed signing secret. */
import type { EngineStore } from "../../../kind/kind";
import type { CaptureLimits } from "../captures/store";
import { MAX_BYTES, MAX_ITEMS } from "./schema";

export const LIMITS: CaptureLimits = { noun: "inbox", maxItems: MAX_ITEMS, maxBytes: MAX_BYTES };

export const SECRET_TABLE = "CREATE TABLE inbox_secret (id INTEGER PRIMARY KEY CHECK (id = 1), sealed TEXT NOT NULL)";

export function saveSecret(store: EngineStore, sealed: string): void {
  store.sql.exec("INSERT INTO inbox_secret (id, sealed) VALUES (1, ?)", sealed);
}

export function sealedSecret(sql: SqlStorage): string | null {
  return sql.exec<{ sealed: string }>("SELECT sealed FROM inbox_secret").toArray()[0]?.sealed ?? null;
}
