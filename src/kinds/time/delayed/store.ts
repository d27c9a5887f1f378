/**
 * A delayed channel's messages: each waits for its time in SQLite; the
 * resource's alarm sends the due ones (a bounded batch per run, the next run
 * follows at once) through the delivery pipeline, which reports how each ended.
 */
import { AppError } from "../../../http/errors";
import { keysetPage } from "../../../kind/pages";
import type { EngineStore } from "../../../kind/kind";
import { outgoingRequest } from "../../../delivery/outbound";
import { MAX_PENDING, type ChannelConfig } from "./schema";
import { iso, notBefore } from "../../../time";

type Row = {
  seq: number;
  message_id: string;
  dedup_id: string | null;
  deliver_at: number;
  body: string | null;
  headers: string;
  status: string;
  delivery_id: string | null;
  created_at: number;
};

type Published = {
  body?: string | Record<string, unknown> | unknown[];
  headers: Record<string, string>;
  delay_seconds?: number;
  deliver_at?: string;
  dedup_id?: string;
};

/** Sent per alarm run, so one run stays short; the alarm comes straight back for the rest. */
const BATCH = 100;

/** The module's tables as the kind's first migration creates them (see the kind's `migrations`). */
export const TABLES = [
  `CREATE TABLE delayed_messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, message_id TEXT NOT NULL UNIQUE, dedup_id TEXT UNIQUE,
    deliver_at INTEGER NOT NULL, body TEXT, headers TEXT NOT NULL, status TEXT NOT NULL, delivery_id TEXT,
    created_at INTEGER NOT NULL)`,
  "CREATE INDEX delayed_due ON delayed_messages (status, deliver_at)",
];

function view(row: Row, deduplicated?: boolean) {
  return {
    message_id: row.message_id,
    dedup_id: row.dedup_id,
    deliver_at: iso(row.deliver_at),
    status: row.status as "pending",
    delivery_id: row.delivery_id,
    created_at: iso(row.created_at),
    ...(deduplicated ? { deduplicated } : {}),
  };
}

const byId = (store: EngineStore, messageId: string) =>
  store.sql.exec<Row>("SELECT * FROM delayed_messages WHERE message_id = ?", messageId).toArray()[0];

export function publish(store: EngineStore, input: Published) {
  if (input.dedup_id) {
    const earlier = store.sql
      .exec<Row>("SELECT * FROM delayed_messages WHERE dedup_id = ?", input.dedup_id)
      .toArray()[0];
    if (earlier) return view(earlier, true);
  }
  const at =
    input.deliver_at !== undefined
      ? notBefore(input.deliver_at, store.now)
      : store.now + (input.delay_seconds ?? 0) * 1000;
  if (at > store.expiresAt) {
    throw new AppError(
      "validation_failed",
      "The message would be delivered after the channel expires: extend it first.",
      {
        errors: [
          { path: input.deliver_at !== undefined ? "deliver_at" : "delay_seconds", message: "is after expires_at" },
        ],
      },
    );
  }
  if (pending(store) >= MAX_PENDING)
    throw new AppError("payload_too_large", `The channel already holds ${MAX_PENDING} pending messages, its limit.`);
  // Serialised now, with its content type, exactly as it will be sent.
  const { body, headers } = outgoingRequest({ url: "", method: "POST", headers: input.headers, body: input.body }, "");
  const id = `msg_${crypto.randomUUID().replace(/-/g, "")}`;
  store.sql.exec(
    "INSERT INTO delayed_messages (message_id, dedup_id, deliver_at, body, headers, status, created_at) " +
      "VALUES (?, ?, ?, ?, ?, 'pending', ?)",
    id,
    input.dedup_id ?? null,
    at,
    body,
    JSON.stringify(headers),
    store.now,
  );
  return view(byId(store, id)!);
}

export function cancel(store: EngineStore, messageId: string) {
  const row = byId(store, messageId);
  if (!row) throw new AppError("not_found", `No message ${messageId} on this channel.`);
  if (row.status !== "pending") throw new AppError("conflict", `Message ${messageId} is already ${row.status}.`);
  store.sql.exec("UPDATE delayed_messages SET status = 'cancelled' WHERE message_id = ?", messageId);
  return view({ ...row, status: "cancelled" });
}

export function list(store: EngineStore, status: string | undefined, limit: number, cursor: string | undefined) {
  const rows = store.sql
    .exec<Row>(
      "SELECT * FROM delayed_messages WHERE seq > ? AND (? IS NULL OR status = ?) ORDER BY seq LIMIT ?",
      Number(cursor ?? 0),
      status ?? null,
      status ?? null,
      limit + 1,
    )
    .toArray();
  return keysetPage(
    rows,
    limit,
    (r) => r.seq,
    (r) => view(r),
  );
}

export function pending(store: EngineStore): number {
  return store.sql.exec<{ n: number }>("SELECT count(*) AS n FROM delayed_messages WHERE status = 'pending'").one().n;
}

export const timer = {
  nextDue: (store: EngineStore): number | null =>
    store.sql
      .exec<{ at: number | null }>("SELECT min(deliver_at) AS at FROM delayed_messages WHERE status = 'pending'")
      .one().at,
  fire: (store: EngineStore, config: ChannelConfig): void => {
    const due = store.sql
      .exec<Row>(
        "SELECT * FROM delayed_messages WHERE status = 'pending' AND deliver_at <= ? ORDER BY deliver_at LIMIT ?",
        store.now,
        BATCH,
      )
      .toArray();
    for (const row of due) {
      const headers = { ...config.headers, ...(JSON.parse(row.headers) as Record<string, string>) };
      const deliveryId = store.send({
        url: config.url,
        method: config.method,
        headers,
        body: row.body,
        eventType: "delayed.delivered",
      });
      store.sql.exec("UPDATE delayed_messages SET status = 'sent', delivery_id = ? WHERE seq = ?", deliveryId, row.seq);
    }
  },
};

export function finished(store: EngineStore, deliveryId: string, outcome: "delivered" | "aborted" | "dead"): void {
  store.sql.exec(
    "UPDATE delayed_messages SET status = ? WHERE delivery_id = ?",
    outcome === "delivered" ? "delivered" : "failed",
    deliveryId,
  );
}

export function exportAll(store: EngineStore) {
  return store.sql
    .exec<Row>("SELECT * FROM delayed_messages ORDER BY seq")
    .toArray()
    .map((r) => ({ ...view(r), body: r.body, headers: JSON.parse(r.headers) as Record<string, string> }));
}
