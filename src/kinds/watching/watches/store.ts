/**
 * A watch's state and its check history. Each check's outcome is recorded here, in the transaction of the timer (or of
 * the check asked for), and moves the state:
 *
 *   pending ──ok──▶ up ──alert_after failures──▶ down ──recover_after successes──▶ up
 *
 * A watch goes down once (watch.down), repeats the alert at the first check realert_seconds or more after the check
 * that last alerted while it stays down, and comes back once (watch.up); a success between failures (or a failure
 * between successes) starts the count again, so flapping sends nothing extra. Change types send watch.changed whatever
 * the state. Every transition is told to the groups that follow the watch (signals.ts) and to its escalation.
 *
 * The tables are in tables.ts, the alerts sent in alerts.ts, and what the API shows of it all in views.ts.
 */
import type { Json } from "../../../json";
import type { EngineStore } from "../../../kind/kind";
import { escalate, publishState, type SignalState } from "../signals";
import { alert, comeUp, goDown, what } from "./alerts";
import type { Outcome } from "./checks";
import { MAX_HISTORY } from "./limits";
import type { WatchConfig, WatchState } from "./schema";
import { readState, type CheckRow, type StateRow } from "./tables";
import { checkView, evidence } from "./views";

/** The most of a check's value kept with it (a long TXT record set, a page's text). */
const MAX_VALUE_CHARS = 4000;

function update(store: EngineStore, fields: Partial<StateRow>): void {
  const names = Object.keys(fields);
  store.sql.exec(
    `UPDATE watch_state SET ${names.map((n) => `${n} = ?`).join(", ")}`,
    ...names.map((n) => fields[n as keyof StateRow] ?? null),
  );
}

/** A heartbeat waits a whole interval for its first ping; every other type checks at once. */
const firstCheckAt = (config: WatchConfig, now: number) =>
  config.check.type === "heartbeat" ? now + config.interval_seconds * 1000 : now;

const signalOf = (state: WatchState): SignalState => (state === "up" || state === "down" ? state : "unknown");

export function initState(store: EngineStore, config: WatchConfig): void {
  const state: WatchState = config.paused ? "paused" : "pending";
  store.sql.exec(
    "INSERT INTO watch_state (id, state, next_check_at) VALUES (1, ?, ?)",
    state,
    config.paused ? null : firstCheckAt(config, store.now),
  );
}

export const nextCheckAt = (store: EngineStore): number | null => {
  const row = readState(store.sql);
  return row.state === "paused" ? null : row.next_check_at;
};

/**
 * A value as kept with its check: its JSON, or past MAX_VALUE_CHARS, the start of that JSON as a string (never a cut,
 * unreadable JSON).
 */
function keptValue(value: Json | null): string | null {
  if (value === null) return null;
  const text = JSON.stringify(value);
  return text.length <= MAX_VALUE_CHARS ? text : JSON.stringify(`${text.slice(0, MAX_VALUE_CHARS)}…`);
}

function logCheck(store: EngineStore, outcome: Outcome, startedAt: number, scheduledAt: number | null): CheckRow {
  const row = store.sql
    .exec<CheckRow>(
      `INSERT INTO watch_checks (at, scheduled_at, ok, status, duration_ms, error, value, changed, ` +
        `excerpt) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
      startedAt,
      scheduledAt,
      outcome.ok ? 1 : 0,
      outcome.status,
      outcome.durationMs,
      outcome.error?.slice(0, 1000) ?? null,
      keptValue(outcome.value),
      outcome.change ? 1 : 0,
      outcome.excerpt,
    )
    .one();
  // Sequence numbers have no gaps, so everything at or below (newest - MAX) is beyond the history's length.
  store.sql.exec("DELETE FROM watch_checks WHERE seq <= ?", row.seq - MAX_HISTORY);
  return row;
}

/**
 * The time a check counts as made at, for repeats: its slot on the schedule (the latest at or before
 * it started, so a late alarm counts as the slot it ran in), or when it started if asked for. A repeat
 * is measured from the alerting check's slot, so with realert_seconds equal to the interval every
 * failing check repeats: measured from the alert's own time, a few ms after its check, the next slot
 * fell just short and the repeat came a whole interval late.
 */
function checkSlot(config: WatchConfig, scheduledAt: number | null, startedAt: number): number {
  if (scheduledAt === null) return startedAt;
  const interval = config.interval_seconds * 1000;
  return scheduledAt + Math.max(0, Math.floor((startedAt - scheduledAt) / interval)) * interval;
}

/** The schedule's next slot after `scheduledAt`: a run that came late does not bunch up checks to catch up. */
function nextSlot(config: WatchConfig, scheduledAt: number, now: number): number {
  const interval = config.interval_seconds * 1000;
  const behind = Math.max(0, Math.floor((now - scheduledAt) / interval));
  return scheduledAt + (behind + 1) * interval;
}

/**
 * Records one check (made at `startedAt`, for the slot `scheduledAt`; null for one asked for) and
 * what it does to the state.
 */
export function recordCheck(
  store: EngineStore,
  config: WatchConfig,
  { outcome, startedAt }: { outcome: Outcome; startedAt: number },
  scheduledAt: number | null,
): ReturnType<typeof checkView> {
  const row = readState(store.sql);
  const check = logCheck(store, outcome, startedAt, scheduledAt);
  const counts = {
    checks: row.checks + 1,
    failed_total: row.failed_total + (outcome.ok ? 0 : 1),
    changes: row.changes + (outcome.change ? 1 : 0),
    ...(outcome.memo !== undefined ? { memo: outcome.memo } : {}),
    ...(scheduledAt !== null ? { next_check_at: nextSlot(config, scheduledAt, store.now) } : {}),
  };
  if (outcome.change) {
    alert(store, config, {
      type: "watch.changed",
      uniqueBy: `changed:${check.seq}`,
      priority: "normal",
      data: {
        state: row.state,
        summary: outcome.change.summary,
        before: outcome.change.before,
        after: outcome.change.after,
        items: outcome.change.items ?? null,
        evidence: evidence(check),
      },
      title: `${what(store, config)} changed`,
      body: outcome.change.summary,
    });
  }
  if (row.state === "paused") return (update(store, counts), checkView(check));
  const checkedAt = checkSlot(config, scheduledAt, startedAt);
  if (outcome.ok) {
    const successes = row.successes + 1;
    const recovers = row.state === "down" && successes >= config.recover_after;
    const state: WatchState = row.state === "pending" || recovers ? "up" : row.state;
    update(store, {
      ...counts,
      failures: 0,
      successes,
      state,
      ...(recovers ? { down_at: null, last_alert_at: null } : {}),
    });
    if (recovers) comeUp(store, config, row, check);
  } else {
    const failures = row.failures + 1;
    if (row.state !== "down" && failures >= config.alert_after) {
      update(store, {
        ...counts,
        failures,
        successes: 0,
        state: "down",
        down_at: store.now,
        last_alert_at: checkedAt,
        alerts: row.alerts + 1,
        down_alerts: 1,
      });
      goDown(store, config, { ...row, down_at: store.now }, check, failures, 1);
    } else if (
      row.state === "down" &&
      config.realert_seconds !== null &&
      checkedAt >= (row.last_alert_at ?? 0) + config.realert_seconds * 1000
    ) {
      update(store, {
        ...counts,
        failures,
        successes: 0,
        last_alert_at: checkedAt,
        alerts: row.alerts + 1,
        down_alerts: row.down_alerts + 1,
      });
      goDown(store, config, row, check, failures, row.down_alerts + 1);
    } else update(store, { ...counts, failures, successes: 0 });
  }
  publishState(
    store,
    signalOf(readState(store.sql).state),
    outcome.ok ? "check passed" : (outcome.error ?? "check failed"),
  );
  return checkView(check);
}

/**
 * Maintenance: no checks until resumed. A watch that was down ends its episode (no watch.up) and resolves its
 * escalation.
 */
export function pause(store: EngineStore, config: WatchConfig): void {
  const row = readState(store.sql);
  if (row.state === "paused") return;
  if (row.state === "down" && config.escalation)
    escalate(store, config.escalation, { open: false, since: row.down_at!, reason: "the watch was paused" });
  update(store, {
    state: "paused",
    failures: 0,
    successes: 0,
    down_at: null,
    last_alert_at: null,
    next_check_at: null,
  });
  publishState(store, "unknown", "paused");
}

export function resume(store: EngineStore, config: WatchConfig): void {
  if (readState(store.sql).state !== "paused") return;
  update(store, { state: "pending", next_check_at: firstCheckAt(config, store.now) });
}

/** A heartbeat's ping (or its failure report) at the public address. */
export function ping(store: EngineStore, failedRun: boolean): void {
  update(store, { last_ping_at: store.now, last_ping_failed: failedRun ? 1 : 0 });
}
