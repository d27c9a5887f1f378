/**
 * A schedule's state: where its clock stands (the last tick it fired, or when
 * it was resumed), pause, the call in flight, and a history of runs. The next
 * tick is derived, never stored: the first cron time after that point, within
 * the resource's life (so an extension brings back ticks past the old expiry).
 * Its jitter is derived from the tick too, so it is stable between reads.
 * Ticks missed while nothing ran (an outage) are not replayed in a burst.
 */
import type { Cron } from "croner";
import { keysetPage } from "../../../kind/pages";
import type { EngineStore } from "../../../kind/kind";
import { outgoingRequest } from "../../../delivery/outbound";
import { cronOf as cronClock } from "../cron";
import { iso, isoOrNull } from "../../../time";
import type { ScheduleConfig } from "./schema";

type State = { paused: number; since: number; in_flight: string | null; runs: number; last_fired_at: number | null };
type RunRow = {
  seq: number;
  scheduled_for: number;
  fired_at: number | null;
  delivery_id: string | null;
  outcome: string;
  manual: number;
};

function cronOf(config: ScheduleConfig): Cron {
  return cronClock(config.cron, config.timezone, { startAt: config.start_at, stopAt: config.end_at });
}

function state(store: EngineStore): State {
  return store.sql.exec<State>("SELECT paused, since, in_flight, runs, last_fired_at FROM schedule").one();
}

/** A stable pseudo-random delay for one tick: the same tick always gets the same jitter. */
function jitterOf(store: EngineStore, config: ScheduleConfig, tick: number): number {
  let h = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(`${store.resourceId}:${tick}`)) h = Math.imul(h ^ byte, 0x01000193) >>> 0;
  return config.jitter_seconds ? h % (config.jitter_seconds * 1000) : 0;
}

/** The next tick and when its call goes out, or null when paused or none is left in the resource's life. */
function next(store: EngineStore, config: ScheduleConfig): { tick: number; at: number } | null {
  const s = state(store);
  if (s.paused) return null;
  const tick = cronOf(config).nextRun(new Date(s.since))?.getTime() ?? null;
  if (tick === null || tick >= store.expiresAt) return null;
  return { tick, at: tick + jitterOf(store, config, tick) };
}

/** The module's tables as the kind's first migration creates them (see the kind's `migrations`). */
export const TABLES = [
  "CREATE TABLE schedule (id INTEGER PRIMARY KEY CHECK (id = 1), paused INTEGER NOT NULL, since INTEGER " +
    "NOT NULL, in_flight TEXT, runs INTEGER NOT NULL, last_fired_at INTEGER)",
  "CREATE TABLE schedule_runs (seq INTEGER PRIMARY KEY AUTOINCREMENT, scheduled_for INTEGER NOT NULL, " +
    "fired_at INTEGER, delivery_id TEXT, outcome TEXT NOT NULL, manual INTEGER NOT NULL)",
];

export function init(store: EngineStore, config: ScheduleConfig): void {
  store.sql.exec("INSERT INTO schedule (id, paused, since, runs) VALUES (1, 0, ?, 0)", store.createdAt);
}

export function view(store: EngineStore, config: ScheduleConfig) {
  const s = state(store);
  return {
    cron: config.cron,
    timezone: config.timezone,
    paused: s.paused === 1,
    next_run_at: isoOrNull(next(store, config)?.at ?? null),
    runs: s.runs,
    last_fired_at: isoOrNull(s.last_fired_at),
    in_flight: s.in_flight,
  };
}

/** Sends one call (a tick, or "run now"), or records it as skipped when the last one is still in flight. */
function run(store: EngineStore, config: ScheduleConfig, scheduledFor: number, manual: boolean): void {
  const s = state(store);
  if (s.in_flight && config.overlap === "skip") {
    store.sql.exec(
      "INSERT INTO schedule_runs (scheduled_for, outcome, manual) VALUES (?, 'skipped', ?)",
      scheduledFor,
      manual ? 1 : 0,
    );
    return;
  }
  const deliveryId = store.send(outgoingRequest(config, "schedule.fired"));
  store.sql.exec(
    "INSERT INTO schedule_runs (scheduled_for, fired_at, delivery_id, outcome, manual) VALUES (?, ?, ?, 'sent', ?)",
    scheduledFor,
    store.now,
    deliveryId,
    manual ? 1 : 0,
  );
  store.sql.exec("UPDATE schedule SET in_flight = ?, runs = runs + 1, last_fired_at = ?", deliveryId, store.now);
}

export const timer = {
  nextDue: (store: EngineStore, config: ScheduleConfig): number | null => next(store, config)?.at ?? null,
  fire: (store: EngineStore, config: ScheduleConfig): void => {
    const due = next(store, config);
    if (!due) return;
    run(store, config, due.tick, false);
    // The clock moves past this tick, or to now after an outage: missed ticks are not replayed.
    store.sql.exec("UPDATE schedule SET since = ?", Math.max(due.tick, store.now));
  },
};

export function runNow(store: EngineStore, config: ScheduleConfig) {
  run(store, config, store.now, true);
  return view(store, config);
}

export function setPaused(store: EngineStore, config: ScheduleConfig, paused: boolean) {
  // Resuming starts the clock at now: the ticks it slept through are not replayed.
  if (paused) store.sql.exec("UPDATE schedule SET paused = 1");
  else store.sql.exec("UPDATE schedule SET paused = 0, since = ?", store.now);
  return view(store, config);
}

export function previewTimes(store: EngineStore, config: ScheduleConfig, count: number) {
  const local = new Intl.DateTimeFormat("sv-SE", {
    timeZone: config.timezone,
    dateStyle: "short",
    timeStyle: "medium",
  });
  const times = cronOf(config)
    .nextRuns(count, new Date(store.now))
    .filter((d) => d.getTime() < store.expiresAt);
  return { times: times.map((d) => ({ at: d.toISOString(), local: `${local.format(d)} ${config.timezone}` })) };
}

export function historyPage(store: EngineStore, limit: number, cursor: string | undefined) {
  const rows = store.sql
    .exec<RunRow>(
      "SELECT * FROM schedule_runs WHERE seq < ? ORDER BY seq DESC LIMIT ?",
      cursor ? Number(cursor) : Number.MAX_SAFE_INTEGER,
      limit + 1,
    )
    .toArray();
  return keysetPage(
    rows,
    limit,
    (r) => r.seq,
    (r) => ({
      seq: r.seq,
      scheduled_for: iso(r.scheduled_for),
      fired_at: isoOrNull(r.fired_at),
      delivery_id: r.delivery_id,
      outcome: r.outcome as "sent" | "skipped" | "delivered" | "failed",
      manual: r.manual === 1,
    }),
  );
}

export function finished(store: EngineStore, deliveryId: string, outcome: "delivered" | "aborted" | "dead"): void {
  store.sql.exec(
    "UPDATE schedule_runs SET outcome = ? WHERE delivery_id = ?",
    outcome === "delivered" ? "delivered" : "failed",
    deliveryId,
  );
  store.sql.exec("UPDATE schedule SET in_flight = NULL WHERE in_flight = ?", deliveryId);
}
