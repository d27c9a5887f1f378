/**
 * A queue's tables, counters and the one place states change.
 *
 * Leasing must find the best visible message without looking at the others, so
 * visibility is a state, not a comparison: visible messages sit in a partial
 * index ordered by (priority DESC, seq) and leasing takes the first N. Delayed
 * and in-flight messages sit in a partial index on visible_at; when that time
 * passes they are "promoted" (to visible, or dead after max_receive_count),
 * lazily by the next call that needs exact visibility and by the kind's timer,
 * which also wakes long-polls. Each message is promoted once per lapse, so no
 * call scans the queue. Counts by state are kept in the state row for the same
 * reason: counting 100,000 rows per call is the scan this layout avoids.
 */
import type { Json } from "../../../json";
import type { EngineStore } from "../../../kind/kind";
import { iso, isoOrNull } from "../../../time";
import type { MessageState, QueueConfig } from "./schema";

export type MessageRow = {
  seq: number;
  message_id: string;
  body: string;
  bytes: number;
  priority: number;
  dedup_id: string | null;
  state: MessageState;
  visible_at: number | null;
  lease_id: string | null;
  receive_count: number;
  enqueued_at: number;
  dead_at: number | null;
};

export type Counts = Record<MessageState, number> & { bytes: number };

/** The module's tables as the kind's first migration creates them (see the kind's `migrations`). */
export const TABLES = [
  `CREATE TABLE queue_state (id INTEGER PRIMARY KEY CHECK (id = 1), visible INTEGER NOT NULL DEFAULT 0,
    delayed INTEGER NOT NULL DEFAULT 0, in_flight INTEGER NOT NULL DEFAULT 0, dead INTEGER NOT NULL DEFAULT 0,
    bytes INTEGER NOT NULL DEFAULT 0)`,
  `CREATE TABLE queue_messages (seq INTEGER PRIMARY KEY AUTOINCREMENT, message_id TEXT NOT NULL UNIQUE,
    body TEXT NOT NULL, bytes INTEGER NOT NULL, priority INTEGER NOT NULL, dedup_id TEXT, state TEXT NOT NULL,
    visible_at INTEGER, lease_id TEXT, receive_count INTEGER NOT NULL DEFAULT 0, enqueued_at INTEGER NOT NULL,
    dead_at INTEGER)`,
  "CREATE INDEX queue_visible ON queue_messages (priority DESC, seq) WHERE state = 'visible'",
  "CREATE INDEX queue_timed ON queue_messages (visible_at) WHERE state IN ('delayed', 'in_flight')",
  "CREATE UNIQUE INDEX queue_leases ON queue_messages (lease_id) WHERE lease_id IS NOT NULL",
  "CREATE INDEX queue_dead ON queue_messages (seq) WHERE state = 'dead'",
  "CREATE INDEX queue_live ON queue_messages (seq) WHERE state <> 'dead'",
  // Dedup ids outlive their messages (an acked message's id still deduplicates within the window).
  "CREATE TABLE queue_dedup (dedup_id TEXT PRIMARY KEY, message_id TEXT NOT NULL, expires_at INTEGER NOT " +
    "NULL) WITHOUT ROWID",
  "CREATE INDEX queue_dedup_expiry ON queue_dedup (expires_at)",
];

export function init(store: EngineStore): void {
  const sql = store.sql;
  sql.exec("INSERT INTO queue_state (id) VALUES (1)");
}

export function counts(sql: SqlStorage): Counts {
  return sql.exec<Counts>("SELECT visible, delayed, in_flight, dead, bytes FROM queue_state").one();
}

export const total = (c: Counts) => c.visible + c.delayed + c.in_flight + c.dead;

/** Moves the counters with a state change (null: the message arrives or leaves); `bytes` when it arrives or leaves. */
export function tally(sql: SqlStorage, from: MessageState | null, to: MessageState | null, n = 1, bytes = 0): void {
  // Column names come from the state enum; amounts are bound.
  const changes: [string, number][] = [];
  if (from) changes.push([`${from} = ${from} - ?`, n]);
  if (to) changes.push([`${to} = ${to} + ?`, n]);
  if (bytes) changes.push(["bytes = bytes + ?", bytes]);
  if (changes.length)
    sql.exec(`UPDATE queue_state SET ${changes.map(([set]) => set).join(", ")}`, ...changes.map(([, arg]) => arg));
}

/** Where a lapsed lease goes: dead once it has been received max_receive_count times. */
export const afterLease = (config: QueueConfig, receiveCount: number): "visible" | "dead" =>
  config.max_receive_count !== null && receiveCount >= config.max_receive_count ? "dead" : "visible";

/**
 * Moves one message to visible or delayed (`at`: when it is or becomes visible) or dead (`at`: since when),
 * forgetting its lease.
 */
export function settle(
  store: EngineStore,
  row: Pick<MessageRow, "seq" | "state">,
  to: "visible" | "delayed" | "dead",
  at: number,
): void {
  if (to === "dead")
    store.sql.exec(
      "UPDATE queue_messages SET state = 'dead', visible_at = NULL, lease_id = NULL, dead_at = ? WHERE seq = ?",
      at,
      row.seq,
    );
  else
    store.sql.exec(
      "UPDATE queue_messages SET state = ?, visible_at = ?, lease_id = NULL WHERE seq = ?",
      to,
      at,
      row.seq,
    );
  tally(store.sql, row.state, to);
}

/** How many lapsed messages one call promotes; the timer, which fires again while any remain, takes the rest. */
export const PROMOTE_BATCH = 1000;

/** Delayed messages whose time came and leases that lapsed become visible (or dead), earliest first. */
export function promote(store: EngineStore, config: QueueConfig, limit = PROMOTE_BATCH): void {
  const due = store.sql
    .exec<Pick<MessageRow, "seq" | "state" | "visible_at" | "receive_count">>(
      "SELECT seq, state, visible_at, receive_count FROM queue_messages WHERE state IN ('delayed', " +
        "'in_flight') AND visible_at <= ? ORDER BY visible_at LIMIT ?",
      store.now,
      limit,
    )
    .toArray();
  // Promoted late or not, each takes effect at the moment it came due.
  for (const row of due)
    settle(store, row, row.state === "in_flight" ? afterLease(config, row.receive_count) : "visible", row.visible_at!);
}

/** When the next delayed message appears or lease lapses: the kind's timer, and stats. */
export function nextVisibleAt(sql: SqlStorage): number | null {
  return (
    sql
      .exec<{ visible_at: number }>(
        "SELECT visible_at FROM queue_messages WHERE state IN ('delayed', 'in_flight') ORDER BY visible_at LIMIT 1",
      )
      .toArray()[0]?.visible_at ?? null
  );
}

/** The state a stored row is in at `now`, for views that cannot promote (export runs outside a transaction). */
function effectiveState(row: MessageRow, config: QueueConfig, now: number): MessageState {
  if ((row.state === "delayed" || row.state === "in_flight") && row.visible_at !== null && row.visible_at <= now) {
    return row.state === "in_flight" ? afterLease(config, row.receive_count) : "visible";
  }
  return row.state;
}

export function view(row: MessageRow, config: QueueConfig, now: number) {
  const state = effectiveState(row, config, now);
  return {
    message_id: row.message_id,
    body: JSON.parse(row.body) as Json,
    priority: row.priority,
    dedup_id: row.dedup_id,
    state,
    receive_count: row.receive_count,
    enqueued_at: iso(row.enqueued_at),
    visible_at: state === "dead" ? null : isoOrNull(row.visible_at),
    dead_at: row.dead_at === null ? (state === "dead" ? iso(row.visible_at!) : null) : iso(row.dead_at),
  };
}
