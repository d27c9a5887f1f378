/**
 * A group's children as it last heard of them, its derived state, and the history of its
 * transitions. A child's state arrives as a relay with a sequence number (signals.ts): an older
 * one than the group holds is ignored, so retries and overtaking never move it backwards. The
 * group re-evaluates on every news and speaks only when its own state moves: group.down and
 * group.up when the definite state (up or down) changes, nothing when it only becomes unknown,
 * so one incident is one alert however many children take part in it.
 */
import type { EngineStore } from "../../../kind/kind";
import { keysetPage } from "../../../kind/pages";
import { iso, isoOrNull } from "../../../time";
import { sendRelay } from "../../../delivery/relay";
import { escalate, publishState, raise, type SignalState } from "../signals";
import { evaluate, type Truth } from "./expression";
import type { GroupConfig } from "./schema";

type ChildRow = {
  alias: string;
  id: string;
  state: SignalState;
  seq: number;
  changed_at: number | null;
  reason: string | null;
};
type GroupRow = {
  state: SignalState;
  definite: "up" | "down" | null;
  changed_at: number;
  down_at: number | null;
  transitions: number;
  alerts: number;
};
type TransitionRow = {
  seq: number;
  at: number;
  from_state: string;
  to_state: string;
  cause: string | null;
  children: string;
};

export const TABLES = [
  "CREATE TABLE group_children (alias TEXT PRIMARY KEY, id TEXT NOT NULL UNIQUE, state TEXT NOT NULL, seq " +
    "INTEGER NOT NULL, changed_at INTEGER, reason TEXT)",
  `CREATE TABLE group_state (id INTEGER PRIMARY KEY CHECK (id = 1), state TEXT NOT NULL, definite TEXT,
    changed_at INTEGER NOT NULL, down_at INTEGER, transitions INTEGER NOT NULL DEFAULT 0,
    alerts INTEGER NOT NULL DEFAULT 0)`,
  `CREATE TABLE group_transitions (seq INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL,
    from_state TEXT NOT NULL, to_state TEXT NOT NULL, cause TEXT, children TEXT NOT NULL)`,
];

/** Transitions kept; older ones are dropped. */
export const MAX_TRANSITIONS = 1000;

const children = (sql: SqlStorage) => sql.exec<ChildRow>("SELECT * FROM group_children ORDER BY alias").toArray();
const groupRow = (sql: SqlStorage) => sql.exec<GroupRow>("SELECT * FROM group_state").one();

/** Asks every child to tell this group its state from now on. */
export function initGroup(store: EngineStore, config: GroupConfig): void {
  for (const [alias, id] of Object.entries(config.children)) {
    store.sql.exec("INSERT INTO group_children (alias, id, state, seq) VALUES (?, ?, 'unknown', 0)", alias, id);
    sendRelay(store, id, "watch.signal", { type: "subscribe" }, `subscribe:${id}`);
  }
  store.sql.exec("INSERT INTO group_state (id, state, changed_at) VALUES (1, 'unknown', ?)", store.now);
}

const childStates = (rows: ChildRow[]) => Object.fromEntries(rows.map((c) => [c.alias, c.state]));

function alert(
  store: EngineStore,
  config: GroupConfig,
  type: "group.down" | "group.up",
  data: Record<string, unknown>,
  uniqueBy: string,
  title: string,
  body: string,
): void {
  raise(store, config.alert_notify, {
    type,
    data,
    uniqueBy,
    title,
    body,
    priority: type === "group.down" ? "high" : "normal",
    tags: ["watch-group", type.slice(6)],
  });
}

/**
 * The group as people read it in a title: by the owner's label, else by its children's aliases; never by its resource
 * id.
 */
const named = (store: EngineStore, rows: ChildRow[]) =>
  store.label ? `Watch group “${store.label}”` : `Watch group of ${rows.map((c) => c.alias).join(", ")}`;

/** What the expression says now, and what the group does about it; `cause` is the child whose news this is. */
function settle(store: EngineStore, config: GroupConfig, cause: ChildRow): void {
  const rows = children(store.sql);
  const byAlias = new Map(rows.map((c) => [c.alias, c.state]));
  const truth: Truth = evaluate(config.expression, (a) =>
    byAlias.get(a) === "down" ? true : byAlias.get(a) === "up" ? false : null,
  );
  const next: SignalState = truth === null ? "unknown" : truth ? "down" : "up";
  const row = groupRow(store.sql);
  if (next === row.state) return;
  const causeView = { alias: cause.alias, id: cause.id, state: cause.state, reason: cause.reason };
  const snapshot = childStates(rows);
  store.sql.exec(
    "INSERT INTO group_transitions (at, from_state, to_state, cause, children) VALUES (?, ?, ?, ?, ?)",
    store.now,
    row.state,
    next,
    JSON.stringify(causeView),
    JSON.stringify(snapshot),
  );
  store.sql.exec(
    "DELETE FROM group_transitions WHERE seq <= (SELECT max(seq) FROM group_transitions) - ?",
    MAX_TRANSITIONS,
  );
  const definite = next === "unknown" ? row.definite : next;
  const downAt = next === "down" && row.definite !== "down" ? store.now : next === "up" ? null : row.down_at;
  const alerts = row.alerts + (next === "down" && row.definite !== "down" ? 1 : 0);
  store.sql.exec(
    "UPDATE group_state SET state = ?, definite = ?, changed_at = ?, down_at = ?, transitions = " +
      "transitions + 1, alerts = ?",
    next,
    definite,
    store.now,
    downAt,
    alerts,
  );
  publishState(store, next, `${cause.alias} is ${cause.state}`);
  const data = { state: next, cause: causeView, children: snapshot };
  if (next === "down" && row.definite !== "down") {
    alert(
      store,
      config,
      "group.down",
      data,
      `down:${store.now}`,
      `${named(store, rows)} is down`,
      `${cause.alias} is ${cause.state}${cause.reason ? `: ${cause.reason}` : ""}.`,
    );
    if (config.escalation)
      escalate(store, config.escalation, {
        open: true,
        since: store.now,
        title: `${named(store, rows)} is down`,
        details: `${cause.alias} is ${cause.state}`,
      });
  }
  if (next === "up" && row.definite === "down" && row.down_at !== null) {
    const downtime = Math.round((store.now - row.down_at) / 1000);
    alert(
      store,
      config,
      "group.up",
      { ...data, down_since: iso(row.down_at), downtime_seconds: downtime },
      `up:${row.down_at}`,
      `${named(store, rows)} is up again`,
      `After ${downtime} s down.`,
    );
    if (config.escalation)
      escalate(store, config.escalation, { open: false, since: row.down_at, reason: "the group recovered" });
  }
}

/** A child's news (from its relay): taken if it is newer than what the group holds. */
export function childState(
  store: EngineStore,
  config: GroupConfig,
  from: string,
  news: { state: SignalState; seq: number; at: number; reason: string },
): void {
  const child = store.sql.exec<ChildRow>("SELECT * FROM group_children WHERE id = ?", from).toArray()[0];
  if (!child || news.seq <= child.seq) return;
  store.sql.exec(
    "UPDATE group_children SET state = ?, seq = ?, changed_at = ?, reason = ? WHERE id = ?",
    news.state,
    news.seq,
    news.at,
    news.reason,
    from,
  );
  settle(store, config, { ...child, state: news.state, seq: news.seq, changed_at: news.at, reason: news.reason });
}

export const isChild = (sql: SqlStorage, id: string) =>
  sql.exec("SELECT 1 FROM group_children WHERE id = ?", id).toArray().length > 0;

const transitionView = (r: TransitionRow) => ({
  seq: r.seq,
  at: iso(r.at),
  from: r.from_state,
  to: r.to_state,
  cause:
    r.cause === null
      ? null
      : (JSON.parse(r.cause) as { alias: string; id: string; state: string; reason: string | null }),
  children: JSON.parse(r.children) as Record<string, string>,
});

export function groupView(store: EngineStore, config: GroupConfig) {
  const row = groupRow(store.sql);
  return {
    state: row.state,
    since: iso(row.changed_at),
    down_since: isoOrNull(row.down_at),
    transitions: row.transitions,
    alerts_sent: row.alerts,
    expression: config.expression,
    children: children(store.sql).map((c) => ({
      alias: c.alias,
      id: c.id,
      state: c.state,
      since: isoOrNull(c.changed_at),
      reason: c.reason,
    })),
  };
}

export function transitions(store: EngineStore, limit: number, cursor: string | undefined) {
  const before = cursor === undefined ? Number.MAX_SAFE_INTEGER : Number(cursor);
  const rows = store.sql
    .exec<TransitionRow>("SELECT * FROM group_transitions WHERE seq < ? ORDER BY seq DESC LIMIT ?", before, limit + 1)
    .toArray();
  return keysetPage(rows, limit, (r) => r.seq, transitionView);
}

export const allTransitions = (sql: SqlStorage) =>
  sql.exec<TransitionRow>("SELECT * FROM group_transitions ORDER BY seq").toArray().map(transitionView);

export const groupUsage = (sql: SqlStorage) => {
  const row = groupRow(sql);
  return { transitions: row.transitions, alerts: row.alerts };
};
