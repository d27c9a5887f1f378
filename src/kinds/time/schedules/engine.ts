/**
 * A schedule's state: the next tick, pause, the call in flight, and a history
 * of runs. The resource's alarm fires each tick (timer); after a tick the next
 * one is computed from the cron in the schedule's time zone. Ticks missed while
 * nothing ran (an outage) are not replayed in a burst: the next is after now.
 */
import { Cron } from "croner";
import type { EngineStore } from "../../../resources/kind";
import { outgoingRequest } from "../outbound";
import type { ScheduleConfig } from "./schema";

type State = { paused: number; next_tick: number | null; next_at: number | null; in_flight: string | null; runs: number; last_fired_at: number | null };
type RunRow = { seq: number; scheduled_for: number; fired_at: number | null; delivery_id: string | null; outcome: string; manual: number };

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function cronOf(config: ScheduleConfig): Cron {
  return new Cron(config.cron, { timezone: config.timezone, mode: "5-part", startAt: config.start_at, stopAt: config.end_at });
}

/** The first tick after `after` that falls within the resource's life, or null. */
function tickAfter(store: EngineStore, config: ScheduleConfig, after: number): number | null {
  const next = cronOf(config).nextRun(new Date(after))?.getTime() ?? null;
  return next !== null && next < store.expiresAt ? next : null;
}

function plan(store: EngineStore, config: ScheduleConfig, after: number): void {
  const tick = tickAfter(store, config, after);
  const jitter = tick === null ? 0 : Math.floor(Math.random() * config.jitter_seconds * 1000);
  store.sql.exec("UPDATE schedule SET next_tick = ?, next_at = ?", tick, tick === null ? null : tick + jitter);
}

function state(store: EngineStore): State {
  return store.sql.exec<State>("SELECT paused, next_tick, next_at, in_flight, runs, last_fired_at FROM schedule").one();
}

export function init(store: EngineStore, config: ScheduleConfig): void {
  store.sql.exec("CREATE TABLE schedule (id INTEGER PRIMARY KEY CHECK (id = 1), paused INTEGER NOT NULL, next_tick INTEGER, next_at INTEGER, in_flight TEXT, runs INTEGER NOT NULL, last_fired_at INTEGER)");
  store.sql.exec("CREATE TABLE schedule_runs (seq INTEGER PRIMARY KEY AUTOINCREMENT, scheduled_for INTEGER NOT NULL, fired_at INTEGER, delivery_id TEXT, outcome TEXT NOT NULL, manual INTEGER NOT NULL)");
  store.sql.exec("INSERT INTO schedule (id, paused, runs) VALUES (1, 0, 0)");
  plan(store, config, store.createdAt);
}

export function view(store: EngineStore, config: ScheduleConfig) {
  const s = state(store);
  return {
    cron: config.cron, timezone: config.timezone, paused: s.paused === 1, next_run_at: s.paused ? null : iso(s.next_at),
    runs: s.runs, last_fired_at: iso(s.last_fired_at), in_flight: s.in_flight,
  };
}

/** Sends one call (a tick, or "run now"), or records it as skipped when the last one is still in flight. */
function run(store: EngineStore, config: ScheduleConfig, scheduledFor: number, manual: boolean): void {
  const s = state(store);
  if (s.in_flight && config.overlap === "skip") {
    store.sql.exec("INSERT INTO schedule_runs (scheduled_for, outcome, manual) VALUES (?, 'skipped', ?)", scheduledFor, manual ? 1 : 0);
    return;
  }
  const deliveryId = store.send(outgoingRequest(config, "schedule.fired"));
  store.sql.exec("INSERT INTO schedule_runs (scheduled_for, fired_at, delivery_id, outcome, manual) VALUES (?, ?, ?, 'sent', ?)", scheduledFor, store.now, deliveryId, manual ? 1 : 0);
  store.sql.exec("UPDATE schedule SET in_flight = ?, runs = runs + 1, last_fired_at = ?", deliveryId, store.now);
}

export const timer = {
  nextDue: (store: EngineStore): number | null => {
    const s = state(store);
    return s.paused ? null : s.next_at;
  },
  fire: (store: EngineStore, config: ScheduleConfig): void => {
    const tick = state(store).next_tick;
    if (tick === null) return;
    run(store, config, tick, false);
    plan(store, config, Math.max(tick, store.now));
  },
};

export function runNow(store: EngineStore, config: ScheduleConfig) {
  run(store, config, store.now, true);
  return view(store, config);
}

export function setPaused(store: EngineStore, config: ScheduleConfig, paused: boolean) {
  store.sql.exec("UPDATE schedule SET paused = ?", paused ? 1 : 0);
  if (!paused) plan(store, config, store.now); // resuming does not replay the ticks it slept through
  return view(store, config);
}

export function previewTimes(store: EngineStore, config: ScheduleConfig, count: number) {
  const local = new Intl.DateTimeFormat("sv-SE", { timeZone: config.timezone, dateStyle: "short", timeStyle: "medium" });
  const times = cronOf(config).nextRuns(count, new Date(store.now)).filter((d) => d.getTime() < store.expiresAt);
  return { times: times.map((d) => ({ at: d.toISOString(), local: `${local.format(d)} ${config.timezone}` })) };
}

export function historyPage(store: EngineStore, limit: number, cursor: string | undefined) {
  const rows = store.sql
    .exec<RunRow>("SELECT * FROM schedule_runs WHERE seq < ? ORDER BY seq DESC LIMIT ?", cursor ? Number(cursor) : Number.MAX_SAFE_INTEGER, limit + 1)
    .toArray();
  const page = rows.slice(0, limit);
  return {
    items: page.map((r) => ({
      seq: r.seq, scheduled_for: iso(r.scheduled_for)!, fired_at: iso(r.fired_at), delivery_id: r.delivery_id,
      outcome: r.outcome as "sent" | "skipped" | "delivered" | "failed", manual: r.manual === 1,
    })),
    next_cursor: rows.length > limit ? String(page[page.length - 1]!.seq) : null,
  };
}

export function finished(store: EngineStore, deliveryId: string, outcome: "delivered" | "aborted" | "dead"): void {
  store.sql.exec("UPDATE schedule_runs SET outcome = ? WHERE delivery_id = ?", outcome === "delivered" ? "delivered" : "failed", deliveryId);
  store.sql.exec("UPDATE schedule SET in_flight = NULL WHERE in_flight = ?", deliveryId);
}
