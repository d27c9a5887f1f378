/**
 * Incidents and their escalation. An incident opens (from the API, or a watch or group going
 * down), and its steps go out at their delays, each to all its targets, round after round until
 * `repeat` is spent; acknowledging it (its ack page, or the API) stops the steps; resolving it
 * (the API, or the watch or group recovering) closes it. Every step sent, every acknowledgement
 * and resolution is in its timeline.
 */
import type { EngineStore } from "../../../kind/kind";
import { AppError } from "../../../http/errors";
import { keysetPage } from "../../../kind/pages";
import { iso, isoOrNull } from "../../../time";
import { sendEvent } from "../../../delivery/events";
import { notifyPeople } from "../../address/notify/people";
import { toHex } from "../../../bytes";
import { MAX_INCIDENTS, MAX_OPEN_INCIDENTS, type EscalationConfig, type Target } from "./schema";

type IncidentRow = {
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

const random = (bytes: number) => toHex(crypto.getRandomValues(new Uint8Array(bytes)));
const find = (sql: SqlStorage, id: string) =>
  sql.exec<IncidentRow>("SELECT * FROM incidents WHERE id = ?", id).toArray()[0];

function log(
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

function view(store: EngineStore, row: IncidentRow) {
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

function event(store: EngineStore, type: string, row: IncidentRow, extra: Record<string, unknown> = {}): void {
  if (store.notifyUrl)
    sendEvent(
      store,
      { url: store.notifyUrl },
      type,
      { incident_id: row.id, key: row.key, title: row.title, source: row.source, ...extra },
      `${type}:${row.id}`,
    );
}

/** Drops the oldest closed incidents beyond MAX_INCIDENTS, with their timelines. */
function trim(store: EngineStore): void {
  const over = store.sql.exec<{ n: number }>("SELECT count(*) AS n FROM incidents").one().n - MAX_INCIDENTS;
  if (over <= 0) return;
  const old = store.sql
    .exec<{ id: string }>("SELECT id FROM incidents WHERE state = 'resolved' ORDER BY seq LIMIT ?", over)
    .toArray();
  for (const { id } of old) {
    store.sql.exec("DELETE FROM incident_timeline WHERE incident = ?", id);
    store.sql.exec("DELETE FROM incidents WHERE id = ?", id);
  }
}

/** Opens an incident, or answers the one still open (or acknowledged) under the same key. */
export function trigger(
  store: EngineStore,
  config: EscalationConfig,
  input: { title: string; details: string; key?: string },
  source: string,
) {
  const key = input.key ?? `inc:${random(8)}`;
  const existing = store.sql
    .exec<IncidentRow>("SELECT * FROM incidents WHERE key = ? AND state != 'resolved'", key)
    .toArray()[0];
  if (existing) return view(store, existing);
  const open = store.sql.exec<{ n: number }>("SELECT count(*) AS n FROM incidents WHERE state != 'resolved'").one().n;
  if (open >= MAX_OPEN_INCIDENTS)
    throw new AppError("conflict", `${MAX_OPEN_INCIDENTS} incidents are open; resolve some first.`);
  const id = `inc_${random(16)}`;
  const firstAt = store.now + config.steps[0]!.delay_seconds * 1000;
  store.sql.exec(
    "INSERT INTO incidents (id, key, source, title, details, state, opened_at, step, round, next_at, " +
      "ack_key) VALUES (?, ?, ?, ?, ?, 'open', ?, 0, 0, ?, ?)",
    id,
    key,
    source,
    input.title,
    input.details,
    store.now,
    firstAt,
    random(16),
  );
  log(store, id, "triggered", { by: source });
  trim(store);
  const row = find(store.sql, id)!;
  event(store, "escalation.triggered", row, { details: row.details, ack_url: ackUrl(store, row) });
  return view(store, row);
}

function sendStep(store: EngineStore, config: EscalationConfig, row: IncidentRow): void {
  const step = config.steps[row.step]!;
  const data = {
    incident_id: row.id,
    title: row.title,
    details: row.details,
    source: row.source,
    opened_at: iso(row.opened_at),
    step: row.step + 1,
    steps: config.steps.length,
    round: row.round + 1,
    ack_url: ackUrl(store, row),
  };
  const unique = `${row.id}:${row.round}:${row.step}`;
  const shown: string[] = [];
  (step.targets as Target[]).forEach((t, i) => {
    if ("url" in t) {
      sendEvent(store, { url: t.url }, "escalation.step", data, `step:${unique}:${i}`);
      shown.push(t.url);
    } else {
      notifyPeople(
        store,
        t.notify,
        {
          title: `${row.title} (escalation step ${row.step + 1})`,
          body: `${row.details ? `${row.details}\n\n` : ""}Acknowledge: ${data.ack_url}`,
          format: "text",
          priority: "high",
          tags: ["escalation"],
        },
        `step:${unique}:${i}`,
      );
      shown.push(t.notify);
    }
  });
  log(store, row.id, "step", { step: row.step + 1, round: row.round + 1, targets: shown });
}

/** Where an incident goes after a step: the next step, the next round, or nowhere (exhausted). */
function advance(store: EngineStore, config: EscalationConfig, row: IncidentRow): void {
  const last = row.step + 1 >= config.steps.length;
  if (last && row.round >= config.repeat) {
    store.sql.exec("UPDATE incidents SET next_at = NULL, steps_sent = steps_sent + 1 WHERE id = ?", row.id);
    log(store, row.id, "exhausted");
    return;
  }
  const [step, round] = last ? [0, row.round + 1] : [row.step + 1, row.round];
  store.sql.exec(
    "UPDATE incidents SET step = ?, round = ?, next_at = ?, steps_sent = steps_sent + 1 WHERE id = ?",
    step,
    round,
    store.now + config.steps[step]!.delay_seconds * 1000,
    row.id,
  );
}

/** The timer: every open incident whose step is due sends it. */
export function fireDue(store: EngineStore, config: EscalationConfig): void {
  const due = store.sql
    .exec<IncidentRow>(
      "SELECT * FROM incidents WHERE state = 'open' AND next_at IS NOT NULL AND next_at <= ? ORDER BY " +
        "next_at LIMIT 100",
      store.now,
    )
    .toArray();
  for (const row of due) {
    sendStep(store, config, row);
    advance(store, config, row);
  }
}

export const nextDue = (sql: SqlStorage): number | null =>
  sql.exec<{ at: number | null }>("SELECT min(next_at) AS at FROM incidents WHERE state = 'open'").one().at;

function requireIncident(sql: SqlStorage, id: string): IncidentRow {
  const row = find(sql, id);
  if (!row) throw new AppError("not_found", "No incident with this id.");
  return row;
}

/** Stops the steps. Acknowledging twice, or a resolved incident, changes nothing. */
export function acknowledge(store: EngineStore, row: IncidentRow, by: string) {
  if (row.state === "open") {
    store.sql.exec(
      "UPDATE incidents SET state = 'acknowledged', next_at = NULL, acked_at = ?, acked_by = ? WHERE id = ?",
      store.now,
      by,
      row.id,
    );
    log(store, row.id, "acknowledged", { by });
    event(store, "escalation.acknowledged", row, { acknowledged_by: by });
  }
  return view(store, find(store.sql, row.id)!);
}

export function resolve(store: EngineStore, row: IncidentRow, by: string) {
  if (row.state !== "resolved") {
    store.sql.exec(
      "UPDATE incidents SET state = 'resolved', next_at = NULL, resolved_at = ?, resolved_by = ? WHERE id = ?",
      store.now,
      by,
      row.id,
    );
    log(store, row.id, "resolved", { by });
    event(store, "escalation.resolved", row, { resolved_by: by });
  }
  return view(store, find(store.sql, row.id)!);
}

export const ackById = (store: EngineStore, id: string, by: string) =>
  acknowledge(store, requireIncident(store.sql, id), by);
export const resolveById = (store: EngineStore, id: string, by: string) =>
  resolve(store, requireIncident(store.sql, id), by);
export const getIncident = (store: EngineStore, id: string) => view(store, requireIncident(store.sql, id));
export const byAckKey = (sql: SqlStorage, key: string) =>
  sql.exec<IncidentRow>("SELECT * FROM incidents WHERE ack_key = ?", key).toArray()[0];

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

export type { IncidentRow };
