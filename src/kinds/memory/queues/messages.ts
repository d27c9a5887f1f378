/**
 * Pushing, looking up, deleting, dead letters and stats. Every query here seeks
 * one of the indexes of store.ts; nothing walks the queue.
 */
import { AppError } from "../../../http/errors";
import { keysetPage } from "../../../kind/pages";
import type { EngineStore } from "../../../kind/kind";
import { iso, isoOrNull } from "../../../time";
import { counts, nextVisibleAt, promote, tally, total, view, type MessageRow } from "./store";
import { MAX_MESSAGE_BYTES, MAX_MESSAGES, MAX_QUEUE_BYTES, type PushInput, type QueueConfig } from "./schema";

/** Expired dedup ids forgotten per push: a bounded amount of housekeeping on each call. */
const DEDUP_PRUNE = 100;
/** Dead letters one `all` redrive moves. */
const REDRIVE_ALL_BATCH = 1000;

const newMessageId = () => `msg_${crypto.randomUUID().replace(/-/g, "")}`;

function byId(store: EngineStore, messageId: string): MessageRow | undefined {
  return store.sql.exec<MessageRow>("SELECT * FROM queue_messages WHERE message_id = ?", messageId).toArray()[0];
}

function requireMessage(store: EngineStore, messageId: string): MessageRow {
  const row = byId(store, messageId);
  if (!row)
    throw new AppError("not_found", `No message ${messageId} in this queue (acked and deleted messages are gone).`);
  return row;
}

/** What a duplicate push answers: the first message, as it is now (null state once it is gone). */
function duplicate(store: EngineStore, config: QueueConfig, messageId: string) {
  const row = byId(store, messageId);
  const v = row ? view(row, config, store.now) : null;
  return { message_id: messageId, duplicate: true, state: v?.state ?? null, visible_at: v?.visible_at ?? null };
}

/** Queues messages in order, all or none (the operation's transaction rolls back on a refusal). */
export function push(store: EngineStore, config: QueueConfig, inputs: PushInput[], pathOf: (i: number) => string) {
  const sql = store.sql;
  sql.exec(
    "DELETE FROM queue_dedup WHERE dedup_id IN (SELECT dedup_id FROM queue_dedup WHERE expires_at <= ? " +
      "ORDER BY expires_at LIMIT ?)",
    store.now,
    DEDUP_PRUNE,
  );
  const c = counts(sql);
  let held = total(c);
  let bytes = c.bytes;
  const encoder = new TextEncoder();
  const items = inputs.map((input, i) => {
    if (input.dedup_id !== undefined) {
      const earlier = sql
        .exec<{ message_id: string }>(
          "SELECT message_id FROM queue_dedup WHERE dedup_id = ? AND expires_at > ?",
          input.dedup_id,
          store.now,
        )
        .toArray()[0];
      if (earlier) return duplicate(store, config, earlier.message_id);
    }
    const text = JSON.stringify(input.body);
    const bodyBytes = encoder.encode(text).length;
    if (bodyBytes > MAX_MESSAGE_BYTES)
      throw new AppError(
        "payload_too_large",
        `${pathOf(i)} is ${bodyBytes} bytes as JSON; a message takes at most ${MAX_MESSAGE_BYTES}.`,
      );
    if (held + 1 > MAX_MESSAGES)
      throw new AppError(
        "payload_too_large",
        `A queue holds at most ${MAX_MESSAGES} messages (dead letters included) and this one is full.`,
      );
    // The dedup id is stored and exported with the message, so it counts too.
    const size = bodyBytes + (input.dedup_id ? encoder.encode(input.dedup_id).length : 0);
    if (bytes + size > MAX_QUEUE_BYTES) {
      throw new AppError(
        "payload_too_large",
        `A queue holds at most ${MAX_QUEUE_BYTES} bytes of bodies and dedup ids; this one holds ${bytes}` +
          `, so ${size} more do not fit.`,
      );
    }
    const delay = input.delay_seconds ?? config.delay_seconds;
    const state = delay > 0 ? "delayed" : "visible";
    const visibleAt = store.now + delay * 1000;
    const messageId = newMessageId();
    sql.exec(
      "INSERT INTO queue_messages (message_id, body, bytes, priority, dedup_id, state, visible_at, " +
        "enqueued_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      messageId,
      text,
      size,
      input.priority,
      input.dedup_id ?? null,
      state,
      visibleAt,
      store.now,
    );
    if (input.dedup_id !== undefined) {
      sql.exec(
        "INSERT OR REPLACE INTO queue_dedup (dedup_id, message_id, expires_at) VALUES (?, ?, ?)",
        input.dedup_id,
        messageId,
        store.now + config.dedup_window_seconds * 1000,
      );
    }
    tally(sql, null, state, 1, size);
    held += 1;
    bytes += size;
    return { message_id: messageId, duplicate: false, state, visible_at: iso(visibleAt) };
  });
  return { items, queued: items.filter((m) => !m.duplicate).length };
}

export function get(store: EngineStore, config: QueueConfig, messageId: string) {
  return view(requireMessage(store, messageId), config, store.now);
}

/**
 * Deletes a message in any state (a dead letter not worth redriving, a job no longer wanted); its lease, if any, ends.
 */
export function remove(store: EngineStore, messageId: string) {
  const row = requireMessage(store, messageId);
  store.sql.exec("DELETE FROM queue_messages WHERE seq = ?", row.seq);
  tally(store.sql, row.state, null, 1, -row.bytes);
  return { message_id: messageId, deleted: true as const };
}

export function deadLetters(store: EngineStore, config: QueueConfig, limit: number, cursor: string | undefined) {
  promote(store, config);
  const rows = store.sql
    .exec<MessageRow>(
      "SELECT * FROM queue_messages WHERE state = 'dead' AND seq > ? ORDER BY seq LIMIT ?",
      Number(cursor ?? 0),
      limit + 1,
    )
    .toArray();
  return keysetPage(
    rows,
    limit,
    (r) => r.seq,
    (r) => view(r, config, store.now),
  );
}

/** Dead letters become visible again, receive_count 0, keeping their place in push order. */
export function redrive(store: EngineStore, config: QueueConfig, input: { message_ids?: string[]; all?: boolean }) {
  promote(store, config);
  const redriven: string[] = [];
  const skipped: string[] = [];
  const rows = input.message_ids
    ? input.message_ids.map((id) => byId(store, id) ?? id)
    : store.sql
        .exec<MessageRow>("SELECT * FROM queue_messages WHERE state = 'dead' ORDER BY seq LIMIT ?", REDRIVE_ALL_BATCH)
        .toArray();
  for (const row of rows) {
    if (typeof row === "string" || row.state !== "dead") {
      skipped.push(typeof row === "string" ? row : row.message_id);
      continue;
    }
    store.sql.exec(
      "UPDATE queue_messages SET state = 'visible', visible_at = ?, receive_count = 0, dead_at = NULL WHERE seq = ?",
      store.now,
      row.seq,
    );
    tally(store.sql, "dead", "visible");
    redriven.push(row.message_id);
  }
  return { redriven, skipped, remaining: counts(store.sql).dead };
}

export function stats(store: EngineStore, config: QueueConfig) {
  promote(store, config);
  const c = counts(store.sql);
  const oldest = store.sql
    .exec<{ enqueued_at: number }>("SELECT enqueued_at FROM queue_messages WHERE state <> 'dead' ORDER BY seq LIMIT 1")
    .toArray()[0];
  const next = nextVisibleAt(store.sql);
  return {
    visible: c.visible,
    in_flight: c.in_flight,
    delayed: c.delayed,
    dead: c.dead,
    messages: total(c),
    bytes: c.bytes,
    oldest_age_seconds: oldest ? Math.max(0, Math.floor((store.now - oldest.enqueued_at) / 1000)) : null,
    next_visible_at: isoOrNull(next),
  };
}

/** Every message in push order, with its state as of now; lease ids stay with their consumers. */
export function exportAll(store: EngineStore, config: QueueConfig) {
  const messages = store.sql
    .exec<MessageRow>("SELECT * FROM queue_messages ORDER BY seq")
    .toArray()
    .map((r) => view(r, config, store.now));
  return { messages };
}
