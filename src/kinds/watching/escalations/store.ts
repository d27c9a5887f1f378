/**
 * Incidents and their escalation. An incident opens (from the API, or a watch or group going
 * down), and its steps go out at their delays, each to all its targets, round after round until
 * `repeat` is spent; acknowledging it (its ack page, or the API) stops the steps; resolving it
 * (the API, or the watch or group recovering) closes it. Every step sent, every acknowledgement
 * and resolution is in its timeline.
 *
 * The tables and how an incident reads are in incidents.ts, the steps in steps.ts, and incidents opened and
 * resolved by a watch or group in sources.ts.
 */
import type { EngineStore } from "../../../kind/kind";
import { AppError } from "../../../http/errors";
import { sendEvent } from "../../../delivery/events";
import { toHex } from "../../../bytes";
import { ackUrl, find, log, view, type IncidentRow } from "./incidents";
import { MAX_INCIDENTS, MAX_OPEN_INCIDENTS, type EscalationConfig } from "./schema";

const random = (bytes: number) => toHex(crypto.getRandomValues(new Uint8Array(bytes)));

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
