/**
 * What a front door keeps beyond its captures (../captures/store.ts): the agent's endpoint, and
 * per message its receipt and its push. A push is a delivery of the pipeline; its end (2xx,
 * given up) comes back through onDeliveryFinished, in the transaction that records it.
 */
import type { EngineStore } from "../../../kind/kind";
import { iso, isoOrNull } from "../../../time";
import { ack as ackCaptures } from "../captures/store";
import type { CaptureLimits } from "../captures/store";
import { MAX_BYTES, MAX_ITEMS, type PUSH_STATES } from "./schema";

export const LIMITS: CaptureLimits = { noun: "front door", maxItems: MAX_ITEMS, maxBytes: MAX_BYTES };

export const TABLES = [
  "CREATE TABLE frontdoor_endpoint (id INTEGER PRIMARY KEY CHECK (id = 1), url TEXT, retry_delays TEXT, " +
    "set_at INTEGER)",
  `CREATE TABLE frontdoor_messages (
    seq INTEGER PRIMARY KEY,
    receipt_id TEXT NOT NULL UNIQUE,
    delivery_id TEXT,
    -- none, pushing, delivered, failed, cancelled
    push TEXT NOT NULL,
    settled_at INTEGER
  )`,
  "CREATE INDEX frontdoor_pushes ON frontdoor_messages (delivery_id)",
];

type Push = (typeof PUSH_STATES)[number];

export interface Endpoint {
  url: string | null;
  retry_delays: number[] | null;
}

export function setEndpoint(store: EngineStore, e: Endpoint) {
  store.sql.exec(
    "INSERT INTO frontdoor_endpoint (id, url, retry_delays, set_at) VALUES (1, ?, ?, ?) ON CONFLICT (id) " +
      "DO UPDATE SET url = excluded.url, retry_delays = excluded.retry_delays, set_at = excluded.set_at",
    e.url,
    e.retry_delays && JSON.stringify(e.retry_delays),
    e.url ? store.now : null,
  );
  return endpointOf(store.sql);
}

export function endpointOf(sql: SqlStorage) {
  const row = sql
    .exec<{ url: string | null; retry_delays: string | null; set_at: number | null }>(
      "SELECT * FROM frontdoor_endpoint",
    )
    .one();
  return {
    url: row.url,
    retry_delays: row.retry_delays ? (JSON.parse(row.retry_delays) as number[]) : null,
    set_at: isoOrNull(row.set_at),
  };
}

export function recordMessage(sql: SqlStorage, seq: number, receiptId: string, deliveryId: string | null): void {
  sql.exec(
    "INSERT INTO frontdoor_messages (seq, receipt_id, delivery_id, push) VALUES (?, ?, ?, ?)",
    seq,
    receiptId,
    deliveryId,
    deliveryId ? "pushing" : "none",
  );
}

/** A push ended: delivered means the agent has it (the message is acked); otherwise it waits to be pulled. */
export function pushFinished(store: EngineStore, deliveryId: string, outcome: "delivered" | "aborted" | "dead"): void {
  const row = store.sql
    .exec<{ seq: number }>("SELECT seq FROM frontdoor_messages WHERE delivery_id = ? AND push = 'pushing'", deliveryId)
    .toArray()[0];
  if (!row) return;
  const push: Push = outcome === "delivered" ? "delivered" : "failed";
  store.sql.exec(
    "UPDATE frontdoor_messages SET push = ?, settled_at = CASE WHEN ? = 'delivered' THEN ? ELSE settled_at " +
      "END WHERE seq = ?",
    push,
    push,
    store.now,
    row.seq,
  );
  if (push === "delivered") ackCaptures(store, { seqs: [row.seq] });
}

/** Acks pulled messages; a push still retrying for one of them stops. */
export function ackMessages(store: EngineStore, input: { seqs?: number[]; through?: number }) {
  const out = ackCaptures(store, input);
  const newly = store.sql
    .exec<{ seq: number; delivery_id: string | null; push: Push }>(
      "SELECT m.seq, m.delivery_id, m.push FROM frontdoor_messages m JOIN captures c ON c.seq = m.seq " +
        "WHERE c.acked_at = ? AND m.settled_at IS NULL",
      store.now,
    )
    .toArray();
  for (const m of newly) {
    if (m.push === "pushing" && m.delivery_id) store.deliveries.cancel(m.delivery_id);
    store.sql.exec(
      "UPDATE frontdoor_messages SET push = CASE WHEN push = 'pushing' THEN 'cancelled' ELSE push END, " +
        "settled_at = ? WHERE seq = ?",
      store.now,
      m.seq,
    );
  }
  return out;
}

export function receiptOf(sql: SqlStorage, receiptId: string) {
  const row = sql
    .exec<{ received_at: number; push: Push; settled_at: number | null; acked_at: number | null }>(
      "SELECT c.received_at, m.push, m.settled_at, c.acked_at FROM frontdoor_messages m JOIN captures c ON " +
        "c.seq = m.seq WHERE m.receipt_id = ?",
      receiptId,
    )
    .toArray()[0];
  if (!row) return null;
  const status = row.push === "delivered" ? "delivered" : row.acked_at !== null ? "acknowledged" : "pending";
  return {
    receipt_id: receiptId,
    received_at: iso(row.received_at),
    status,
    push: row.push,
    settled_at: isoOrNull(row.settled_at),
  } as const;
}

export function pushCounts(sql: SqlStorage) {
  const out = { pushing: 0, delivered: 0, failed: 0 };
  for (const r of sql
    .exec<{ push: Push; n: number }>("SELECT push, COUNT(*) AS n FROM frontdoor_messages GROUP BY push")
    .toArray())
    if (r.push in out) out[r.push as keyof typeof out] = r.n;
  return out;
}
