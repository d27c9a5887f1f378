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
 */
import type { Json } from "../../../json";
import type { EngineStore } from "../../../kind/kind";
import { keysetPage } from "../../../kind/pages";
import { iso, isoOrNull } from "../../../time";
import { escalate, publishState, raise, subscribers, type Alert, type SignalState } from "../signals";
import type { Outcome } from "./checks";
import { MAX_HISTORY, type WatchConfig, type WatchState } from "./schema";

/** The most of a check's value kept with it (a long TXT record set, a page's text). */
const MAX_VALUE_CHARS = 4000;

type StateRow = {
  state: WatchState;
  failures: number;
  successes: number;
  checks: number;
  failed_total: number;
  changes: number;
  alerts: number;
  down_at: number | null;
  last_alert_at: number | null;
  down_alerts: number;
  next_check_at: number | null;
  memo: string | null;
  last_ping_at: number | null;
  last_ping_failed: number;
};
type CheckRow = {
  seq: number;
  at: number;
  scheduled_at: number | null;
  ok: number;
  status: number | null;
  duration_ms: number | null;
  error: string | null;
  value: string | null;
  changed: number;
  excerpt: string | null;
};

export const TABLES = [
  `CREATE TABLE watch_state (id INTEGER PRIMARY KEY CHECK (id = 1), state TEXT NOT NULL,
    failures INTEGER NOT NULL DEFAULT 0, successes INTEGER NOT NULL DEFAULT 0, checks INTEGER NOT NULL DEFAULT 0,
    failed_total INTEGER NOT NULL DEFAULT 0, changes INTEGER NOT NULL DEFAULT 0, alerts INTEGER NOT NULL DEFAULT 0,
    down_at INTEGER, last_alert_at INTEGER, down_alerts INTEGER NOT NULL DEFAULT 0, next_check_at INTEGER, memo TEXT,
    last_ping_at INTEGER, last_ping_failed INTEGER NOT NULL DEFAULT 0)`,
  `CREATE TABLE watch_checks (seq INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, scheduled_at INTEGER,
    ok INTEGER NOT NULL, status INTEGER, duration_ms INTEGER, error TEXT, value TEXT, changed INTEGER NOT NULL,
    excerpt TEXT)`,
];

export const readState = (sql: SqlStorage) => sql.exec<StateRow>("SELECT * FROM watch_state").one();

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

const checkView = (r: CheckRow) => ({
  seq: r.seq,
  at: iso(r.at),
  scheduled_at: isoOrNull(r.scheduled_at),
  ok: r.ok === 1,
  status: r.status,
  duration_ms: r.duration_ms,
  error: r.error,
  value: r.value === null ? null : (JSON.parse(r.value) as Json),
  changed: r.changed === 1,
  excerpt: r.excerpt,
});

/** The failing (or recovering) check, as an event carries it. */
const evidence = (r: CheckRow) => {
  const { seq: _seq, ...shown } = checkView(r);
  return shown;
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

type WatchAlert = Omit<Alert, "tags"> & { type: "watch.down" | "watch.up" | "watch.changed" };

function alert(store: EngineStore, config: WatchConfig, a: WatchAlert): void {
  raise(store, config.alert_notify, {
    ...a,
    data: { check_type: config.check.type, ...a.data },
    tags: ["watch", a.type.slice(6)],
  });
}

/** How the type reads in a title. */
const TYPE_WORDS: Record<WatchConfig["check"]["type"], string> = {
  http_status: "HTTP status",
  keyword: "Keyword",
  content_change: "Content",
  json_value: "JSON value",
  response_time: "Response time",
  header: "Header",
  redirect: "Redirect",
  dns_record: "DNS",
  rss: "Feed",
  heartbeat: "Heartbeat",
  domain_expiry: "Domain expiry",
  chain_balance: "Balance",
  number_threshold: "Number",
};

/**
 * The watch as people read it in an alert's title (and an incident's, on its ack page): by the owner's
 * label, else by its type and what it looks at; never by its resource id.
 */
function what(store: EngineStore, config: WatchConfig): string {
  if (store.label) return `Watch “${store.label}”`;
  const c = config.check;
  const target =
    "url" in c ? c.url : "domain" in c ? c.domain : "name" in c ? c.name : "address" in c ? c.address : null;
  return `${TYPE_WORDS[c.type]} watch${target ? ` of ${target}` : ""}`;
}

function goDown(
  store: EngineStore,
  config: WatchConfig,
  row: StateRow,
  check: CheckRow,
  failures: number,
  number: number,
): void {
  const downAt = row.down_at ?? store.now;
  alert(store, config, {
    type: "watch.down",
    uniqueBy: `down:${downAt}:${number}`,
    priority: "high",
    data: {
      state: "down",
      down_since: iso(downAt),
      consecutive_failures: failures,
      alert_number: number,
      repeat: number > 1,
      evidence: evidence(check),
    },
    title: `${what(store, config)} is down${number > 1 ? ` (alert ${number})` : ""}`,
    body: `${check.error ?? "The check failed."} ${failures} consecutive failed check(s); down since ${iso(downAt)}.`,
  });
  if (number === 1 && config.escalation)
    escalate(store, config.escalation, {
      open: true,
      since: downAt,
      title: `${what(store, config)} is down`,
      details: check.error ?? "The check failed.",
    });
}

function comeUp(store: EngineStore, config: WatchConfig, row: StateRow, check: CheckRow): void {
  const downAt = row.down_at!;
  const downtime = Math.round((store.now - downAt) / 1000);
  alert(store, config, {
    type: "watch.up",
    uniqueBy: `up:${downAt}`,
    priority: "normal",
    data: { state: "up", down_since: iso(downAt), downtime_seconds: downtime, evidence: evidence(check) },
    title: `${what(store, config)} is up again`,
    body: `Recovered at ${iso(store.now)} after ${downtime} s down.`,
  });
  if (config.escalation)
    escalate(store, config.escalation, { open: false, since: downAt, reason: "the watch recovered" });
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

export function lastCheck(sql: SqlStorage) {
  const r = sql.exec<CheckRow>("SELECT * FROM watch_checks ORDER BY seq DESC LIMIT 1").toArray()[0];
  return r ? checkView(r) : null;
}

export function statusView(store: EngineStore, config: WatchConfig) {
  const row = readState(store.sql);
  return {
    state: row.state,
    check_type: config.check.type,
    consecutive_failures: row.failures,
    consecutive_successes: row.successes,
    checks: row.checks,
    failures: row.failed_total,
    changes: row.changes,
    alerts_sent: row.alerts,
    down_since: isoOrNull(row.down_at),
    last_check: lastCheck(store.sql),
    next_check_at: row.state === "paused" ? null : isoOrNull(row.next_check_at),
    last_ping_at: isoOrNull(row.last_ping_at),
    followers: subscribers(store.sql).length,
  };
}

const FILTERS = { all: "", failures: "AND ok = 0", changes: "AND changed = 1" } as const;

/** Newest first; the cursor is the last row's sequence number. */
export function history(store: EngineStore, limit: number, cursor: string | undefined, only: keyof typeof FILTERS) {
  const before = cursor === undefined ? Number.MAX_SAFE_INTEGER : Number(cursor);
  const rows = store.sql
    .exec<CheckRow>(
      `SELECT * FROM watch_checks WHERE seq < ? ${FILTERS[only]} ORDER BY seq DESC LIMIT ?`,
      before,
      limit + 1,
    )
    .toArray();
  return keysetPage(rows, limit, (r) => r.seq, checkView);
}

export const allChecks = (sql: SqlStorage) =>
  sql.exec<CheckRow>("SELECT * FROM watch_checks ORDER BY seq").toArray().map(checkView);
