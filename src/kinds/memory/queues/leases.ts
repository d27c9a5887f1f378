/**
 * Leases: a lease takes the best visible messages (highest priority, then push
 * order) and hides each until its deadline under a fresh lease id. Ack, nack and
 * extend name that id and are honoured only while the lease is current: once the
 * deadline passes the message is visible again (or dead), and a consumer that
 * overran its lease cannot ack a message another consumer may hold by then.
 */
import { AppError } from "../../../http/errors";
import type { Json } from "../../../json";
import type { EngineStore } from "../../../kind/kind";
import { iso } from "../../../time";
import { afterLease, promote, settle, tally, type MessageRow } from "./store";
import type { LeaseInput, QueueConfig } from "./schema";

const newLeaseId = () => `lease_${crypto.randomUUID().replace(/-/g, "")}`;

/** A long-poll lease is ready once a message is visible, or a delayed one or a lapsed lease is due to become so. */
export function anyVisible(store: EngineStore): boolean {
  const visible = store.sql.exec("SELECT 1 FROM queue_messages WHERE state = 'visible' LIMIT 1").toArray().length > 0;
  if (visible) return true;
  return (
    store.sql
      .exec(
        "SELECT 1 FROM queue_messages WHERE state IN ('delayed', 'in_flight') AND visible_at <= ? LIMIT 1",
        store.now,
      )
      .toArray().length > 0
  );
}

export function lease(store: EngineStore, config: QueueConfig, input: LeaseInput) {
  promote(store, config);
  const until = store.now + (input.visibility_seconds ?? config.visibility_seconds) * 1000;
  const rows = store.sql
    .exec<MessageRow>(
      "SELECT * FROM queue_messages WHERE state = 'visible' ORDER BY priority DESC, seq LIMIT ?",
      input.max_messages,
    )
    .toArray();
  const items = rows.map((row) => {
    const leaseId = newLeaseId();
    store.sql.exec(
      "UPDATE queue_messages SET state = 'in_flight', lease_id = ?, visible_at = ?, receive_count = " +
        "receive_count + 1 WHERE seq = ?",
      leaseId,
      until,
      row.seq,
    );
    return {
      message_id: row.message_id,
      lease_id: leaseId,
      body: JSON.parse(row.body) as Json,
      priority: row.priority,
      dedup_id: row.dedup_id,
      receive_count: row.receive_count + 1,
      enqueued_at: iso(row.enqueued_at),
      lease_expires_at: iso(until),
    };
  });
  if (items.length) tally(store.sql, "visible", "in_flight", items.length);
  return { items };
}

/** The message this lease holds now, or undefined when the lease lapsed or was settled. */
function held(store: EngineStore, leaseId: string): MessageRow | undefined {
  const row = store.sql.exec<MessageRow>("SELECT * FROM queue_messages WHERE lease_id = ?", leaseId).toArray()[0];
  return row && row.state === "in_flight" && row.visible_at! > store.now ? row : undefined;
}

function requireHeld(store: EngineStore, leaseId: string): MessageRow {
  const row = held(store, leaseId);
  if (!row) {
    throw new AppError(
      "conflict",
      `Lease ${leaseId} is not held: it lapsed (the message may be leased again), or was acked or nacked already.`,
    );
  }
  return row;
}

function deleteHeld(store: EngineStore, row: MessageRow): void {
  store.sql.exec("DELETE FROM queue_messages WHERE seq = ?", row.seq);
  tally(store.sql, "in_flight", null, 1, -row.bytes);
}

/** Done with: the message is deleted. */
export function ack(store: EngineStore, leaseId: string) {
  const row = requireHeld(store, leaseId);
  deleteHeld(store, row);
  return { message_id: row.message_id, acked: true as const };
}

/** Acks many leases in one call; those no longer held are listed, not refused, since the rest went through. */
export function ackMany(store: EngineStore, leaseIds: string[]) {
  const acked: string[] = [];
  const lost: string[] = [];
  for (const leaseId of new Set(leaseIds)) {
    const row = held(store, leaseId);
    if (!row) {
      lost.push(leaseId);
      continue;
    }
    deleteHeld(store, row);
    acked.push(row.message_id);
  }
  return { acked, lost };
}

/**
 * Gives the message back: visible now or after `delaySeconds`, or dead once it has been received max_receive_count
 * times.
 */
export function nack(store: EngineStore, config: QueueConfig, leaseId: string, delaySeconds: number) {
  const row = requireHeld(store, leaseId);
  const to = afterLease(config, row.receive_count) === "dead" ? "dead" : delaySeconds > 0 ? "delayed" : "visible";
  const at = to === "dead" ? store.now : store.now + delaySeconds * 1000;
  settle(store, row, to, at);
  return { message_id: row.message_id, state: to, visible_at: to === "dead" ? null : iso(at) };
}

/** Keeps the message hidden for `visibilitySeconds` from now, under the same lease id. */
export function extend(store: EngineStore, leaseId: string, visibilitySeconds: number) {
  const row = requireHeld(store, leaseId);
  const until = store.now + visibilitySeconds * 1000;
  store.sql.exec("UPDATE queue_messages SET visible_at = ? WHERE seq = ?", until, row.seq);
  return { message_id: row.message_id, lease_id: leaseId, lease_expires_at: iso(until) };
}
