/** Incidents opened and resolved by a watch or group going down and recovering (relayed to this resource). */
import type { EngineStore } from "../../../kind/kind";
import type { IncidentRow } from "./incidents";
import type { EscalationConfig } from "./schema";
import { resolve, trigger } from "./store";

/**
 * Relays may arrive out of order (a trigger retried after its resolve went through): each source's
 * latest resolved episode is remembered, and a trigger for an episode already resolved opens nothing.
 */
export const SOURCE_TABLES = [
  "CREATE TABLE incident_sources (source TEXT PRIMARY KEY, resolved_since INTEGER NOT NULL)",
];

const resolvedSince = (sql: SqlStorage, source: string) =>
  sql
    .exec<{ resolved_since: number }>("SELECT resolved_since FROM incident_sources WHERE source = ?", source)
    .toArray()[0]?.resolved_since ?? null;

/**
 * A watch or group went down (the episode that began at `since`): an incident keyed by its id, unless that episode is
 * over already.
 */
export function triggerFrom(
  store: EngineStore,
  config: EscalationConfig,
  source: string,
  since: number,
  title: string,
  details: string,
): void {
  const resolved = resolvedSince(store.sql, source);
  if (resolved !== null && resolved >= since) return;
  trigger(store, config, { title, details, key: source }, source);
}

/** A watch or group recovered from the episode that began at `since`: its open incident is resolved. */
export function resolveFrom(store: EngineStore, source: string, since: number): void {
  store.sql.exec(
    "INSERT INTO incident_sources (source, resolved_since) VALUES (?, ?) ON CONFLICT (source) DO UPDATE " +
      "SET resolved_since = max(resolved_since, excluded.resolved_since)",
    source,
    since,
  );
  const row = store.sql
    .exec<IncidentRow>("SELECT * FROM incidents WHERE key = ? AND state != 'resolved'", source)
    .toArray()[0];
  if (row) resolve(store, row, source);
}
