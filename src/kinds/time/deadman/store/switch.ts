/**
 * The switch: one row. Misses are derived from the clock rather than counted by the
 * alarm, so an alarm that runs late or twice can neither lose nor double one:
 * `misses` holds those recorded up to `due_at` (failure pings, and misses carried over
 * when a ping moved due_at); after that, one more counts at due_at + grace and at every
 * period past it. `state` is the last state announced: an event goes out when the
 * state derived from the clock moves away from it (by a ping or the timer).
 */
import type { EngineStore } from "../../../../kind/kind";
import { iso, isoOrNull } from "../../../../time";
import { sendEvent } from "../../../../delivery/events";
import { notifyPeople } from "../../../address/notify/people";
import { logPing } from "./pings";
import { payloadView, tripPayload } from "./payload";
import type { DeadmanConfig, Signal, SwitchState } from "../schema";

export type SwitchRow = {
  state: SwitchState;
  due_at: number | null;
  misses: number;
  last_ping_at: number | null;
  last_signal: Signal | null;
  last_success_at: number | null;
  started_at: number | null;
  last_duration_ms: number | null;
  down_at: number | null;
  alerts: number;
  last_alert_at: number | null;
  pings: number;
  alerts_total: number;
};

export interface Ping {
  signal: Signal;
  exitCode: number | null;
  source: "public" | "api";
  method: string;
  body: string | null;
}

/** The module's tables as the kind's first migration creates them (see the kind's `migrations`). */
export const TABLES = [
  `CREATE TABLE deadman (id INTEGER PRIMARY KEY CHECK (id = 1), state TEXT NOT NULL, due_at INTEGER,
    misses INTEGER NOT NULL DEFAULT 0, last_ping_at INTEGER, last_signal TEXT, last_success_at INTEGER,
    started_at INTEGER, last_duration_ms INTEGER, down_at INTEGER, alerts INTEGER NOT NULL DEFAULT 0,
    last_alert_at INTEGER, pings INTEGER NOT NULL DEFAULT 0, alerts_total INTEGER NOT NULL DEFAULT 0)`,
];

export function initSwitch(store: EngineStore): void {
  store.sql.exec("INSERT INTO deadman (id, state) VALUES (1, 'new')");
}

export const readSwitch = (sql: SqlStorage): SwitchRow => sql.exec<SwitchRow>("SELECT * FROM deadman").one();

function update(store: EngineStore, changes: Partial<SwitchRow>): void {
  const columns = Object.keys(changes);
  // Column names come from SwitchRow's keys, never from input; values are bound.
  store.sql.exec(`UPDATE deadman SET ${columns.map((c) => `${c} = ?`).join(", ")}`, ...Object.values(changes));
}

/** Runs missed since due_at: the first once the grace is over, then one per period. */
function missedSince(row: SwitchRow, config: DeadmanConfig, now: number): number {
  if (row.due_at === null) return 0;
  const over = now - (row.due_at + config.grace_seconds * 1000);
  return over < 0 ? 0 : Math.floor(over / (config.period_seconds * 1000)) + 1;
}

export const missesAt = (row: SwitchRow, config: DeadmanConfig, now: number) =>
  row.misses + missedSince(row, config, now);

/** When the misses reach alert_after_misses, if no success comes first (null while not monitoring). */
export function alertAt(row: SwitchRow, config: DeadmanConfig): number | null {
  if (row.due_at === null || row.state === "down") return null;
  const toGo = config.alert_after_misses - row.misses;
  if (toGo <= 0) return row.due_at;
  return row.due_at + config.grace_seconds * 1000 + (toGo - 1) * config.period_seconds * 1000;
}

/** The state at `now`: down stays down until a success; new and paused wait for a ping. */
export function derive(row: SwitchRow, config: DeadmanConfig, now: number): SwitchState {
  if (row.state === "new" || row.state === "paused" || row.state === "down") return row.state;
  if (missesAt(row, config, now) >= config.alert_after_misses) return "down";
  return missesAt(row, config, now) > 0 || (row.due_at !== null && now >= row.due_at) ? "late" : "up";
}

const at = (ms: number | null) => isoOrNull(ms);

/**
 * An alert: the event to alert_url, and the same news as a message to alert_notify's people. Both
 * are staged in the caller's transaction; `uniqueBy` keeps a repeated alarm from sending either twice.
 */
function alert(
  store: EngineStore,
  config: DeadmanConfig,
  type: "deadman.down" | "deadman.up" | "deadman.late",
  data: Record<string, unknown>,
  uniqueBy: string,
  message: { title: string; body: string; priority: "low" | "normal" | "high" },
): void {
  if (config.alert_url)
    sendEvent(store, { url: config.alert_url, headers: config.alert_headers }, type, data, uniqueBy);
  if (config.alert_notify)
    notifyPeople(
      store,
      config.alert_notify,
      { ...message, format: "text", tags: ["deadman", type.slice("deadman.".length)] },
      `${type}:${uniqueBy}`,
    );
}

const since = (ms: number | null) => (ms === null ? "never" : iso(ms));

function summary(row: SwitchRow, config: DeadmanConfig, now: number) {
  return {
    misses: missesAt(row, config, now),
    last_ping_at: at(row.last_ping_at),
    last_signal: row.last_signal,
    last_success_at: at(row.last_success_at),
    next_due_at: at(row.due_at),
  };
}

function sendDown(store: EngineStore, config: DeadmanConfig, row: SwitchRow, downAt: number, number: number): void {
  const data = {
    ...summary(row, config, store.now),
    state: "down",
    down_since: iso(downAt),
    alert_number: number,
    repeat: number > 1,
  };
  alert(store, config, "deadman.down", data, `down:${downAt}:${number}`, {
    title: `Dead-man switch ${store.resourceId} is down${number > 1 ? ` (alert ${number})` : ""}`,
    body:
      `No successful ping since ${since(row.last_success_at)}; ${data.misses} missed run(s). Down since ` +
      `${iso(downAt)}.`,
    priority: "high",
  });
}

/** Announces the derived state when it moved: late (if asked for), or down with its alert and the payload's release. */
export function settle(store: EngineStore, config: DeadmanConfig): void {
  const row = readSwitch(store.sql);
  const next = derive(row, config, store.now);
  if (next === row.state) return;
  if (next === "down") {
    update(store, {
      state: "down",
      down_at: store.now,
      alerts: 1,
      last_alert_at: store.now,
      alerts_total: row.alerts_total + 1,
    });
    sendDown(store, config, row, store.now, 1);
    tripPayload(store);
    return;
  }
  update(store, { state: next });
  if (next === "late" && config.notify_late) {
    const alertsAt = at(alertAt(row, config));
    alert(
      store,
      config,
      "deadman.late",
      { ...summary(row, config, store.now), state: "late", alert_at: alertsAt },
      `late:${row.due_at}:${row.misses}`,
      {
        title: `Dead-man switch ${store.resourceId} is late`,
        body: `A ping was due at ${since(row.due_at)}; the switch goes down at ${alertsAt ?? "once a run is missed"}.`,
        priority: "low",
      },
    );
  }
}

/** While down: the repeated alert, when realert_seconds has passed since the last one. */
export function realert(store: EngineStore, config: DeadmanConfig): void {
  const row = readSwitch(store.sql);
  if (row.state !== "down" || !config.realert_seconds || row.last_alert_at === null || row.down_at === null) return;
  if (store.now < row.last_alert_at + config.realert_seconds * 1000) return;
  // An alarm that ran late sends one repeat, not one per interval it slept through.
  update(store, { alerts: row.alerts + 1, last_alert_at: store.now, alerts_total: row.alerts_total + 1 });
  sendDown(store, config, row, row.down_at, row.alerts + 1);
}

/** When the timer must next look: lateness, the alert, or the repeat of the alert. */
export function switchDue(store: EngineStore, config: DeadmanConfig): number | null {
  const row = readSwitch(store.sql);
  if (row.state === "down")
    return config.realert_seconds && row.last_alert_at !== null
      ? row.last_alert_at + config.realert_seconds * 1000
      : null;
  if (row.state === "up") return row.due_at;
  if (row.state === "late") return alertAt(row, config);
  return null;
}

/** Records a ping and what it does to the switch (success → up, with the recovery event if it was down). */
export function ping(store: EngineStore, config: DeadmanConfig, p: Ping): void {
  const row = readSwitch(store.sql);
  const now = store.now;
  const completes = p.signal === "success" || p.signal === "fail";
  const durationMs = completes && row.started_at !== null ? now - row.started_at : null;
  logPing(store, { ...p, durationMs });
  const seen = { pings: row.pings + 1, last_ping_at: now, last_signal: p.signal };
  const period = config.period_seconds * 1000;
  if (p.signal === "start") update(store, { ...seen, started_at: now });
  else if (p.signal === "log") update(store, seen);
  else if (p.signal === "success") {
    const run = { started_at: null, last_duration_ms: durationMs ?? row.last_duration_ms };
    update(store, {
      ...seen,
      ...run,
      state: "up",
      due_at: now + period,
      misses: 0,
      last_success_at: now,
      down_at: null,
      alerts: 0,
      last_alert_at: null,
    });
    if (row.state === "down" && row.down_at !== null) {
      const data = {
        state: "up",
        down_since: iso(row.down_at),
        downtime_seconds: Math.round((now - row.down_at) / 1000),
        misses: missesAt(row, config, now),
        recovered_at: iso(now),
      };
      alert(store, config, "deadman.up", data, `up:${row.down_at}:${now}`, {
        title: `Dead-man switch ${store.resourceId} is up again`,
        body: `A successful ping at ${iso(now)}, after ${data.downtime_seconds} s down.`,
        priority: "normal",
      });
    }
  } else {
    // A failed run counts as a miss, and the next run is expected a period after it.
    const run = { started_at: null, last_duration_ms: durationMs ?? row.last_duration_ms };
    const monitoring = row.state === "new" || row.state === "paused" ? { state: "up" as const } : {};
    update(store, { ...seen, ...run, ...monitoring, misses: missesAt(row, config, now) + 1, due_at: now + period });
    settle(store, config);
  }
}

/** Stops watching until the next ping: no lateness, no alerts (a down switch is cleared without a recovery event). */
export function pause(store: EngineStore): void {
  update(store, {
    state: "paused",
    due_at: null,
    misses: 0,
    started_at: null,
    down_at: null,
    alerts: 0,
    last_alert_at: null,
  });
}

export function statusView(store: EngineStore, config: DeadmanConfig) {
  const row = readSwitch(store.sql);
  const state = derive(row, config, store.now);
  return {
    state,
    last_ping_at: at(row.last_ping_at),
    last_signal: row.last_signal,
    last_success_at: at(row.last_success_at),
    last_duration_seconds: row.last_duration_ms === null ? null : row.last_duration_ms / 1000,
    running_since: at(row.started_at),
    next_due_at: at(row.due_at),
    alert_at: state === "down" ? null : at(alertAt(row, config)),
    misses: missesAt(row, config, store.now),
    down_since: at(row.down_at),
    alerts_sent: row.alerts,
    pings: row.pings,
    payload: payloadView(store),
  };
}
