/**
 * What a notify resource keeps: its channels (the URL sealed, its redacted form to show) and
 * its sends, each with the deliveries it made (one per channel, or per recipient). A send's
 * requests are staged in the transaction that records it, so a send is whole or not at all;
 * each delivery's end comes back through onDeliveryFinished.
 */
import { randomId } from "../../../auth/ids";
import { seal, unseal } from "../../../auth/sealing";
import { AppError } from "../../../http/errors";
import type { JsonObject } from "../../../json";
import type { EngineStore } from "../../../kind/kind";
import { keysetPage } from "../../../kind/pages";
import { iso } from "../../../time";
import { outgoing, readChannel } from "./channels/read";
import type { NotifyMessage } from "./channels/message";
import { MAX_CHANNELS, MAX_SENDS } from "./schema";

export const TABLES = [
  `CREATE TABLE notify_channels (
    channel_id TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    scheme TEXT NOT NULL,
    service TEXT NOT NULL,
    shown TEXT NOT NULL,
    sealed TEXT NOT NULL,
    added_at INTEGER NOT NULL
  )`,
  `CREATE TABLE notify_sends (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    send_id TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    title TEXT,
    source TEXT NOT NULL
  )`,
  `CREATE TABLE notify_results (
    delivery_id TEXT PRIMARY KEY,
    send_id TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    service TEXT NOT NULL,
    -- delivered, aborted or dead once the pipeline settled it
    outcome TEXT
  )`,
  "CREATE INDEX notify_results_send ON notify_results (send_id)",
];

type ChannelRow = {
  channel_id: string;
  seq: number;
  scheme: string;
  service: string;
  shown: string;
  sealed: string;
  added_at: number;
};
type SendRow = { seq: number; send_id: string; created_at: number; title: string | null; source: string };
type ResultRow = { delivery_id: string; channel_id: string; service: string; outcome: string | null };

/** Adds a channel (its targets already checked: checkedChannel); the URL is sealed before it is written. */
export function addChannel(store: EngineStore, raw: string, field: string): string {
  const read = readChannel(raw, field);
  const count = store.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM notify_channels").one().n;
  if (count >= MAX_CHANNELS)
    throw new AppError("validation_failed", `A notify resource holds at most ${MAX_CHANNELS} channels.`, {
      errors: [{ path: field, message: `at most ${MAX_CHANNELS} channels` }],
    });
  const id = randomId("ch_");
  const seq = store.sql.exec<{ n: number }>("SELECT COALESCE(MAX(seq), 0) + 1 AS n FROM notify_channels").one().n;
  store.sql.exec(
    "INSERT INTO notify_channels VALUES (?, ?, ?, ?, ?, ?, ?)",
    id,
    seq,
    read.scheme,
    read.channel.service,
    read.shown,
    seal(store.env, raw),
    store.now,
  );
  return id;
}

export function removeChannel(sql: SqlStorage, channelId: string): void {
  if (!sql.exec("DELETE FROM notify_channels WHERE channel_id = ?", channelId).rowsWritten)
    throw new AppError("not_found", `No channel ${channelId} on this resource.`);
}

const channelRows = (sql: SqlStorage) => sql.exec<ChannelRow>("SELECT * FROM notify_channels ORDER BY seq").toArray();
const channelView = (r: ChannelRow) => ({
  channel_id: r.channel_id,
  service: r.service,
  scheme: r.scheme,
  url: r.shown,
  added_at: iso(r.added_at),
});

export function channelViews(sql: SqlStorage) {
  return channelRows(sql).map(channelView);
}

export function channelCount(sql: SqlStorage): number {
  return sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM notify_channels").one().n;
}

/**
 * Sends a message through the chosen channels (all when `only` is null): every request staged in
 * this transaction, so the send is recorded with all its deliveries or not at all. `sendId` is
 * given by a relay (one per alert, so a repeated relay sends nothing twice: no results then).
 */
export function send(
  store: EngineStore,
  message: Omit<NotifyMessage, "id">,
  only: string[] | null,
  source: string,
  sendId = randomId("snd_"),
) {
  const results: { channel_id: string; service: string; delivery_id: string }[] = [];
  if (store.sql.exec("SELECT 1 FROM notify_sends WHERE send_id = ?", sendId).toArray().length)
    return { send_id: sendId, results };
  let rows = channelRows(store.sql);
  if (only) {
    const unknown = only.filter((id) => !rows.some((r) => r.channel_id === id));
    if (unknown.length)
      throw new AppError("validation_failed", `No channel ${unknown[0]} on this resource.`, {
        errors: [{ path: "channels", message: `unknown channel ${unknown[0]}` }],
      });
    rows = rows.filter((r) => only.includes(r.channel_id));
  }
  if (!rows.length)
    throw new AppError("conflict", "This notify resource has no channels to send through: add one first.");
  const full = { ...message, id: sendId };
  for (const row of rows) {
    // Read again from the sealed URL: the grammar is the channel module's, as it is now.
    const read = readChannel(unseal(store.env, row.sealed), "channels");
    for (const request of outgoing(store.env, read, full)) {
      const deliveryId = store.send(request);
      store.sql.exec(
        "INSERT INTO notify_results VALUES (?, ?, ?, ?, NULL)",
        deliveryId,
        sendId,
        row.channel_id,
        row.service,
      );
      results.push({ channel_id: row.channel_id, service: row.service, delivery_id: deliveryId });
    }
  }
  store.sql.exec(
    "INSERT INTO notify_sends (send_id, created_at, title, source) VALUES (?, ?, ?, ?)",
    sendId,
    store.now,
    message.title,
    source,
  );
  prune(store.sql);
  return { send_id: sendId, results };
}

function prune(sql: SqlStorage): void {
  const cut = sql
    .exec<{ seq: number }>("SELECT seq FROM notify_sends ORDER BY seq DESC LIMIT 1 OFFSET ?", MAX_SENDS)
    .toArray()[0]?.seq;
  if (cut === undefined) return;
  sql.exec("DELETE FROM notify_results WHERE send_id IN (SELECT send_id FROM notify_sends WHERE seq <= ?)", cut);
  sql.exec("DELETE FROM notify_sends WHERE seq <= ?", cut);
}

export function deliveryFinished(sql: SqlStorage, deliveryId: string, outcome: string): void {
  sql.exec("UPDATE notify_results SET outcome = ? WHERE delivery_id = ? AND outcome IS NULL", outcome, deliveryId);
}

function sendView(store: EngineStore, row: SendRow, detail: boolean) {
  const results = store.sql
    .exec<ResultRow>(
      "SELECT delivery_id, channel_id, service, outcome FROM notify_results WHERE send_id = ? ORDER BY rowid",
      row.send_id,
    )
    .toArray()
    .map((r) => {
      const d = store.deliveries.get(r.delivery_id) as JsonObject | null;
      const log = (d?.attempt_log as { error: string | null }[] | undefined) ?? [];
      return {
        channel_id: r.channel_id,
        service: r.service,
        delivery_id: r.delivery_id,
        status: r.outcome ?? (d?.status as string | undefined) ?? "pending",
        attempts: (d?.attempts as number | undefined) ?? 0,
        last_error: log.length ? log[log.length - 1]!.error : null,
        delivery: detail ? d : null,
      };
    });
  const summary = { delivered: 0, failed: 0, pending: 0 };
  for (const r of results)
    summary[
      r.status === "delivered" ? "delivered" : r.status === "dead" || r.status === "aborted" ? "failed" : "pending"
    ] += 1;
  return {
    send_id: row.send_id,
    created_at: iso(row.created_at),
    title: row.title,
    source: row.source,
    summary,
    results,
  };
}

export function getSend(store: EngineStore, sendId: string, detail: boolean) {
  const row = store.sql.exec<SendRow>("SELECT * FROM notify_sends WHERE send_id = ?", sendId).toArray()[0];
  if (!row) throw new AppError("not_found", `No send ${sendId} on this resource.`);
  return sendView(store, row, detail);
}

/** Whether every delivery of the send is settled (a long-poll's wait is over). */
export function sendSettled(sql: SqlStorage, sendId: string): boolean {
  return !sql.exec("SELECT 1 FROM notify_results WHERE send_id = ? AND outcome IS NULL LIMIT 1", sendId).toArray()
    .length;
}

/** Newest first; the cursor is the last row's sequence number. */
export function sendsPage(store: EngineStore, limit: number, cursor: string | undefined) {
  const rows = store.sql
    .exec<SendRow>(
      "SELECT * FROM notify_sends WHERE seq < ? ORDER BY seq DESC LIMIT ?",
      cursor ? Number(cursor) : Number.MAX_SAFE_INTEGER,
      limit + 1,
    )
    .toArray();
  return keysetPage(
    rows,
    limit,
    (r) => r.seq,
    (r) => sendView(store, r, false),
  );
}

export function sendCount(sql: SqlStorage): number {
  return sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM notify_sends").one().n;
}

export function allSends(store: EngineStore) {
  return store.sql
    .exec<SendRow>("SELECT * FROM notify_sends ORDER BY seq")
    .toArray()
    .map((r) => sendView(store, r, false));
}
