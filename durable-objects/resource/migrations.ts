/**
 * Versioned table layouts inside a ResourceObject. A resource lives up to a year while the
 * code under it changes, so the platform's tables and each kind's are an ordered list of
 * migrations (the pattern cloudflare/agents uses for its scheduler's tables): a new resource
 * runs them all; an existing one runs, once, the ones it has not, before it serves anything
 * (the object's constructor holds requests back meanwhile). Each list only ever grows.
 */
import type { AnyKind, Migration } from "../../src/kind/kind";
import type { JsonObject } from "../../src/json";
import { META_PUBLIC_DISABLED, META_TABLE } from "./meta";
import { BILLING_TABLES } from "./billing-tables";
import {
  DELIVERY_OUTBOX_COLUMNS,
  DELIVERY_QUEUED_BY_COLUMN,
  DELIVERY_RETRY_COLUMN,
  DELIVERY_TABLES,
} from "./deliveries-tables";
import { R2_DROPS_TABLE } from "./r2-drops";
import { addSettlesColumn, PENDING_CHARGES_TABLE } from "./direct-charges";
import { orIfMissing } from "./missing-table";
import { GRANTS_TABLE } from "./grants-tables";
import { KEPT_ANSWERS_TABLE } from "./kept-answers";
import { requireKind } from "../../src/resources/kinds";
import type { MetaCell } from "./meta-cell";

/**
 * The platform's own tables in every resource: its meta row, its billing holds, its deliveries, its pending R2 deletes
 * and direct charges.
 */
const PLATFORM_MIGRATIONS: Migration[] = [
  { sql: [META_TABLE, ...BILLING_TABLES, ...DELIVERY_TABLES] },
  // Deliveries become a transactional outbox with stored bodies and retention; R2 deletes are recorded before they are
  // made.
  { sql: [...DELIVERY_OUTBOX_COLUMNS, R2_DROPS_TABLE] },
  // Public addresses resolve without D1: the operator's disable list is mirrored into the resource.
  { sql: [META_PUBLIC_DISABLED] },
  // A delivery may carry its own retry schedule.
  { sql: [DELIVERY_RETRY_COLUMN] },
  // Creates and extends write their charge down before they take it (direct-charges.ts).
  { sql: [PENDING_CHARGES_TABLE] },
  // Where the queue is held in memory (wrangler dev), a restart sends again what the dead process had queued.
  { sql: [DELIVERY_QUEUED_BY_COLUMN] },
  // A creation paid by x402 stays written down until its payment is settled.
  { run: addSettlesColumn },
  // Narrowed management tokens, kept by the resource they narrow (grants.ts).
  { sql: [GRANTS_TABLE] },
  // The answers of keyed operations, kept in their own transaction (kept-answers.ts).
  { sql: [KEPT_ANSWERS_TABLE] },
];

/** Every list a resource of `kind` runs, by owner: the platform's, then the kind's. */
export const tableLists = (kind: AnyKind): Record<string, Migration[]> => ({
  platform: PLATFORM_MIGRATIONS,
  [kind.kind]: kind.migrations,
});

const VERSIONS_TABLE = "CREATE TABLE IF NOT EXISTS schema_versions (owner TEXT PRIMARY KEY, version INTEGER NOT NULL)";

/** The stored versions; null in an object made before versions were kept. */
function storedVersions(sql: SqlStorage): Map<string, number> | null {
  return orIfMissing(
    "schema_versions",
    () =>
      new Map(
        sql
          .exec<{ owner: string; version: number }>("SELECT owner, version FROM schema_versions")
          .toArray()
          .map((r) => [r.owner, r.version]),
      ),
    null,
  );
}

/**
 * Runs what each list has beyond `from` (0 for a new resource) and records the versions; the stored config is rewritten
 * by the steps that say how.
 */
function apply(
  sql: SqlStorage,
  lists: Record<string, Migration[]>,
  from: Map<string, number>,
  config: JsonObject,
): { config: JsonObject; changed: boolean } {
  sql.exec(VERSIONS_TABLE);
  let changed = false;
  for (const [owner, steps] of Object.entries(lists)) {
    const done = from.get(owner) ?? 0;
    for (const step of steps.slice(done)) {
      for (const statement of step.sql ?? []) sql.exec(statement);
      step.run?.(sql);
      if (step.config) config = step.config(config);
      changed = true;
    }
    sql.exec(
      "INSERT INTO schema_versions (owner, version) VALUES (?, ?) ON CONFLICT (owner) DO UPDATE SET " +
        "version = excluded.version",
      owner,
      steps.length,
    );
  }
  return { config, changed };
}

/** Creates the tables of a new resource: every migration of every list. */
export function createTables(sql: SqlStorage, lists: Record<string, Migration[]>): void {
  apply(sql, lists, new Map(), {});
}

/**
 * Brings an existing resource's tables up to date (call inside a transaction). Answers the config
 * rewritten by the migrations that say how, or null when nothing ran.
 */
export function migrateTables(
  sql: SqlStorage,
  lists: Record<string, Migration[]>,
  config: JsonObject,
): JsonObject | null {
  const stored = storedVersions(sql);
  // An object made before versions were kept has its tables as the first migration of each list made them: version 1.
  const from = stored ?? new Map(Object.keys(lists).map((o) => [o, 1]));
  const behind = Object.entries(lists).some(([owner, steps]) => (from.get(owner) ?? 0) < steps.length);
  if (!behind && stored) return null;
  const out = apply(sql, lists, from, config);
  return out.changed ? out.config : null;
}

/**
 * Runs the migrations this resource has not run yet, before it serves anything (the kind's module is loaded by then).
 */
export function migrateResource(storage: DurableObjectStorage, meta: MetaCell): void {
  const row = meta.get();
  if (!row) return;
  storage.transactionSync(() => {
    const config = migrateTables(storage.sql, tableLists(requireKind(row.kind)), JSON.parse(row.config) as JsonObject);
    if (config) meta.update({ config: JSON.stringify(config) });
  });
  meta.forget(); // read again: a migration may have added columns
}
