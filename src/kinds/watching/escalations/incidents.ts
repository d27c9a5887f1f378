/** The incidents and their timelines: the tables, and how an incident reads (one, a page, all, the counts). */
import type { EngineStore } from "../../../kind/kind";
import { keysetPage } from "../../../kind/pages";
import { iso, isoOrNull } from "../../../time";

export type IncidentRow = {
  seq: number;
  id: string;
  key: string;
  source: string;
  title: string;
  details: string;
  state: "open" | "acknowledged" | "resolved";
  opened_at: number;
  step: number;
  round: number;
  next_at: number | null;
  steps_sent: number;
  ack_key: string;
  acked_at: number | null;
  acked_by: string | null;
  resolved_at: number | null;
  resolved_by: string | null;
};
type TimelineRow = {
  incident: string;
  at: number;
  event: string;
  step: number | null;
  round: number | null;
  by: string | null;
  targets: string | null;
};

export const TABLES = [
  `CREATE TABLE incidents (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, key TEXT NOT NULL,
    source TEXT NOT NULL, title TEXT NOT NULL, details TEXT NOT NULL, state TEXT NOT NULL, opened_at INTEGER NOT NULL,
    step INTEGER NOT NULL, round INTEGER NOT NULL, next_at INTEGER, steps_sent INTEGER NOT NULL DEFAULT 0,
    ack_key TEXT NOT NULL UNIQUE, acked_at INTEGER, acked_by TEXT, resolved_at INTEGER, resolved_by TEXT)`,
  "CREATE INDEX incidents_due ON incidents (next_at) WHERE next_at IS NOT NULL",
  "CREATE INDEX incidents_key ON incidents (key, state)",
  `CREATE TABLE incident_timeline (seq INTEGER PRIMARY KEY AUTOINCREMENT, incident TEXT NOT NULL, at INTEGER NOT NULL,
    event TEXT NOT NULL, step INTEGER, round INTEGER, by TEXT, targets TEXT)`,
  "CREATE INDEX incident_timeline_incident ON incident_timeline (incident, seq)",
];

export const find = (sql: SqlStorage, id: string) =>
  sql.exec<IncidentRow>("SELECT * FROM incidents WHERE id = ?", id).toArray()[0];

export function log(
  store: EngineStore,
  incident: string,
  event: string,
  fields: { step?: number; round?: number; by?: string; targets?: string[] } = {},
): void {
  store.sql.exec(
    "INSERT INTO incident_timeline (incident, at, event, step, round, by, targets) VALUES (?, ?, ?, ?, ?, ?, ?)",
    incident,
    store.now,
    event,
    fields.step ?? null,
    fields.round ?? null,
    fields.by ?? null,
    fields.targets ? JSON.stringify(fields.targets) : null,
  );
}

export const ackUrl = (store: { publicUrl: string | null }, row: IncidentRow) =>
  `${store.publicUrl}/ack/${row.ack_key}`;

export function view(store: EngineStore, row: IncidentRow) {
  const timeline = store.sql
    .exec<TimelineRow>("SELECT * FROM incident_timeline WHERE incident = ? ORDER BY seq", row.id)
    .toArray()
    .map((t) => ({
      at: iso(t.at),
      event: t.event as "step",
      step: t.step,
      round: t.round,
      by: t.by,
      targets: t.targets === null ? null : (JSON.parse(t.targets) as string[]),
    }));
  return {
    incident_id: row.id,
    key: row.key,
    source: row.source,
    title: row.title,
    details: row.details,
    state: row.state,
    opened_at: iso(row.opened_at),
    next_step_at: isoOrNull(row.next_at),
    steps_sent: row.steps_sent,
    ack_url: ackUrl(store, row),
    acknowledged_at: isoOrNull(row.acked_at),
    acknowledged_by: row.acked_by,
    resolved_at: isoOrNull(row.resolved_at),
    resolved_by: row.resolved_by,
    timeline,
  };
}

export const byAckKey = (sql: SqlStorage, key: string) =>
  sql.exec<IncidentRow>("SELECT * FROM incidents WHERE ack_key = ?", key).toArray()[0];

export function list(store: EngineStore, limit: number, cursor: string | undefined, state: string) {
  const before = cursor === undefined ? Number.MAX_SAFE_INTEGER : Number(cursor);
  const rows = store.sql
    .exec<IncidentRow>(
      `SELECT * FROM incidents WHERE seq < ? ${state === "all" ? "" : "AND state = ?"} ORDER BY seq DESC LIMIT ?`,
      ...(state === "all" ? [before, limit + 1] : [before, state, limit + 1]),
    )
    .toArray();
  return keysetPage(
    rows,
    limit,
    (r) => r.seq,
    (r) => view(store, r),
  );
}

export const allIncidents = (store: EngineStore) =>
  store.sql
    .exec<IncidentRow>("SELECT * FROM incidents ORDER BY seq")
    .toArray()
    .map((r) => view(store, r));

export function usage(sql: SqlStorage) {
  const r = sql
    .exec<{ total: number; open: number; steps: number }>(
      "SELECT count(*) AS total, sum(state = 'open') AS open, coalesce(sum(steps_sent), 0) AS steps FROM incidents",
    )
    .one();
  return { incidents: r.total, open: r.open ?? 0, steps_sent: r.steps };
}
