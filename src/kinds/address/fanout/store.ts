/**
 * A fanout's destinations, the messages it took, and what became of each message at each
 * destination (sent with its delivery id, filtered out, or its filter failed). A delivery's end is
 * written back here by onDeliveryFinished, so a destination's statistics are one grouped read.
 */
import { AppError } from "../../../http/errors";
import type { EngineStore } from "../../../kind/kind";
import { toHex } from "../../../bytes";
import { iso, isoOrNull } from "../../../time";
import { MAX_DESTINATIONS, MAX_MESSAGES, type DestinationInput, type Filter } from "./schema";

export const TABLES = [
  `CREATE TABLE fanout_destinations (
    id TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    headers TEXT NOT NULL,
    filter TEXT,
    retry_delays TEXT,
    added_at INTEGER NOT NULL,
    removed_at INTEGER
  )`,
  `CREATE TABLE fanout_messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    received_at INTEGER NOT NULL,
    method TEXT NOT NULL,
    path TEXT NOT NULL,
    size INTEGER NOT NULL
  )`,
  `CREATE TABLE fanout_sends (
    destination_id TEXT NOT NULL,
    message_seq INTEGER NOT NULL,
    -- sent, filtered_out, filter_error
    outcome TEXT NOT NULL,
    filter_error TEXT,
    delivery_id TEXT,
    -- The delivery's end (delivered, aborted, dead); null while it runs.
    status TEXT,
    attempts INTEGER,
    PRIMARY KEY (destination_id, message_seq)
  )`,
  "CREATE INDEX fanout_sends_delivery ON fanout_sends (delivery_id) WHERE delivery_id IS NOT NULL",
];

export interface Destination {
  id: string;
  url: string;
  headers: Record<string, string>;
  filter: Filter | null;
  retry_delays: number[] | null;
}

type DestinationRow = {
  id: string;
  url: string;
  headers: string;
  filter: string | null;
  retry_delays: string | null;
  added_at: number;
  removed_at: number | null;
};

const parsed = (row: DestinationRow): Destination => ({
  id: row.id,
  url: row.url,
  headers: JSON.parse(row.headers) as Record<string, string>,
  filter: row.filter === null ? null : (JSON.parse(row.filter) as Filter),
  retry_delays: row.retry_delays === null ? null : (JSON.parse(row.retry_delays) as number[]),
});

export function addDestination(store: EngineStore, input: DestinationInput): string {
  const active = store.sql
    .exec<{ n: number }>("SELECT COUNT(*) AS n FROM fanout_destinations WHERE removed_at IS NULL")
    .one().n;
  if (active >= MAX_DESTINATIONS)
    throw new AppError("conflict", `A fanout sends to at most ${MAX_DESTINATIONS} destinations; remove one first.`);
  const id = `dst_${toHex(crypto.getRandomValues(new Uint8Array(8)))}`;
  store.sql.exec(
    "INSERT INTO fanout_destinations (id, url, headers, filter, retry_delays, added_at) VALUES (?, ?, ?, ?, ?, ?)",
    id,
    input.url,
    JSON.stringify(input.headers),
    input.filter ? JSON.stringify(input.filter) : null,
    input.retry_delays ? JSON.stringify(input.retry_delays) : null,
    store.now,
  );
  return id;
}

export function removeDestination(store: EngineStore, id: string): void {
  const removed = store.sql
    .exec(
      "UPDATE fanout_destinations SET removed_at = ? WHERE id = ? AND removed_at IS NULL RETURNING id",
      store.now,
      id,
    )
    .toArray().length;
  if (!removed) throw new AppError("not_found", `No active destination ${id} on this fanout.`);
}

export const activeDestinations = (sql: SqlStorage): Destination[] =>
  sql
    .exec<DestinationRow>("SELECT * FROM fanout_destinations WHERE removed_at IS NULL ORDER BY added_at, rowid")
    .toArray()
    .map(parsed);

export function findDestination(sql: SqlStorage, id: string): DestinationRow {
  const row = sql.exec<DestinationRow>("SELECT * FROM fanout_destinations WHERE id = ?", id).toArray()[0];
  if (!row) throw new AppError("not_found", `No destination ${id} on this fanout.`);
  return row;
}

export function messageCount(sql: SqlStorage): { messages: number; last_seq: number } {
  return sql
    .exec<{ messages: number; last_seq: number | null }>(
      "SELECT COUNT(*) AS messages, MAX(seq) AS last_seq FROM fanout_messages",
    )
    .toArray()
    .map((r) => ({ messages: r.messages, last_seq: r.last_seq ?? 0 }))[0]!;
}

export function recordMessage(
  store: EngineStore,
  m: { receivedAt: number; method: string; path: string; size: number },
): number {
  if (messageCount(store.sql).messages >= MAX_MESSAGES)
    throw new AppError("storage_full", `This fanout takes at most ${MAX_MESSAGES} messages in its life; use another.`);
  return store.sql
    .exec<{ seq: number }>(
      "INSERT INTO fanout_messages (received_at, method, path, size) VALUES (?, ?, ?, ?) RETURNING seq",
      m.receivedAt,
      m.method,
      m.path,
      m.size,
    )
    .one().seq;
}

export function recordSend(
  sql: SqlStorage,
  destinationId: string,
  seq: number,
  outcome: "sent" | "filtered_out" | "filter_error",
  deliveryId: string | null,
  filterError: string | null = null,
): void {
  sql.exec(
    "INSERT INTO fanout_sends (destination_id, message_seq, outcome, filter_error, delivery_id) VALUES (?, ?, ?, ?, ?)",
    destinationId,
    seq,
    outcome,
    filterError,
    deliveryId,
  );
}

/** A delivery's end, from the pipeline (onDeliveryFinished). */
export function finishSend(store: EngineStore, deliveryId: string, outcome: string): void {
  const attempts = (store.deliveries.get(deliveryId) as { attempts?: number } | null)?.attempts ?? null;
  store.sql.exec(
    "UPDATE fanout_sends SET status = ?, attempts = ? WHERE delivery_id = ?",
    outcome,
    attempts,
    deliveryId,
  );
}

type StatsRow = {
  destination_id: string;
  matched: number;
  filtered_out: number;
  filter_errors: number;
  pending: number;
  delivered: number;
  dead: number;
  aborted: number;
  redelivered: number;
  attempts: number;
};

function statsByDestination(sql: SqlStorage): Map<string, Omit<StatsRow, "destination_id">> {
  const rows = sql
    .exec<StatsRow>(
      `SELECT destination_id,
       IFNULL(SUM(outcome = 'sent'), 0) AS matched, IFNULL(SUM(outcome = 'filtered_out'), 0) AS filtered_out,
       IFNULL(SUM(outcome = 'filter_error'), 0) AS filter_errors,
       IFNULL(SUM(outcome = 'sent' AND status IS NULL), 0) AS pending,
       IFNULL(SUM(status = 'delivered'), 0) AS delivered, IFNULL(SUM(status = 'dead'), 0) AS dead,
       IFNULL(SUM(status = 'aborted'), 0) AS aborted,
       IFNULL(SUM(attempts > 1), 0) AS redelivered, COALESCE(SUM(attempts), 0) AS attempts
     FROM fanout_sends GROUP BY destination_id`,
    )
    .toArray();
  return new Map(rows.map(({ destination_id, ...stats }) => [destination_id, stats]));
}

const NO_STATS = {
  matched: 0,
  filtered_out: 0,
  filter_errors: 0,
  pending: 0,
  delivered: 0,
  dead: 0,
  aborted: 0,
  redelivered: 0,
  attempts: 0,
};

export function destinationViews(sql: SqlStorage) {
  const stats = statsByDestination(sql);
  return sql
    .exec<DestinationRow>("SELECT * FROM fanout_destinations ORDER BY added_at, rowid")
    .toArray()
    .map((row) => {
      const { id, ...rest } = parsed(row);
      return {
        destination_id: id,
        ...rest,
        added_at: iso(row.added_at),
        removed_at: isoOrNull(row.removed_at),
        stats: stats.get(row.id) ?? NO_STATS,
      };
    });
}

export function sendsOf(store: EngineStore, destinationId: string, cursor: number, limit: number) {
  const rows = store.sql
    .exec<{
      message_seq: number;
      received_at: number;
      outcome: "sent" | "filtered_out" | "filter_error";
      filter_error: string | null;
      delivery_id: string | null;
    }>(
      `SELECT s.message_seq, m.received_at, s.outcome, s.filter_error, s.delivery_id
     FROM fanout_sends s JOIN fanout_messages m ON m.seq = s.message_seq
     WHERE s.destination_id = ? AND s.message_seq > ? ORDER BY s.message_seq LIMIT ?`,
      destinationId,
      cursor,
      limit + 1,
    )
    .toArray();
  const page = rows.slice(0, limit);
  return {
    items: page.map((r) => ({
      message_seq: r.message_seq,
      received_at: iso(r.received_at),
      outcome: r.outcome,
      filter_error: r.filter_error,
      delivery: r.delivery_id ? (store.deliveries.get(r.delivery_id) as never) : null,
    })),
    next_cursor: rows.length > limit ? String(page[page.length - 1]!.message_seq) : null,
  };
}
