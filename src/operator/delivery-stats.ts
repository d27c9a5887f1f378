/**
 * Deliveries as the operator counts them, kept in D1 by the queue consumer (delivery/consumer.ts):
 * `deliveries_open` holds each delivery that has been attempted and waits for a retry (pending),
 * `deliveries_dead` each one that died (its dead-letter queue, or its own schedule spent) and has
 * not got through since (a retry by hand that succeeds takes it off). One D1 batch per queue batch;
 * a failure is logged and never touches the deliveries, which go on, at least once, regardless.
 */

/** What one consumed message did to its delivery. */
export type DeliveryStep =
  | "retrying" // failed, and the queue will try again
  | "stopped" // this message goes no further, its delivery may (a newer send of it is under way)
  | "settled" // delivered, or aborted by the receiver
  | "dead";

export interface DeliveryEvent {
  deliveryId: string;
  resourceId: string;
  step: DeliveryStep;
}

/**
 * Longer than any wait between two attempts (a queue holds a retry back 12 h at most): older rows were lost, not
 * pending.
 */
export const PENDING_WINDOW_MS = 24 * 3600_000;

const OPEN = `INSERT INTO deliveries_open (delivery_id, resource_id, first_at, last_at, attempts) VALUES (?, ?, ?, ?, 1)
ON CONFLICT (delivery_id) DO UPDATE SET last_at = excluded.last_at, attempts = attempts + 1`;
const CLOSE = "DELETE FROM deliveries_open WHERE delivery_id = ?";
const DIED = `INSERT INTO deliveries_dead (delivery_id, resource_id, at) VALUES (?, ?, ?)
ON CONFLICT (delivery_id) DO UPDATE SET at = excluded.at`;
const REVIVED = "DELETE FROM deliveries_dead WHERE delivery_id = ?";

function statementsOf(db: D1Database, e: DeliveryEvent, now: number): D1PreparedStatement[] {
  switch (e.step) {
    case "retrying":
      return [db.prepare(OPEN).bind(e.deliveryId, e.resourceId, now, now)];
    case "stopped":
      return [db.prepare(CLOSE).bind(e.deliveryId)];
    case "settled":
      return [db.prepare(CLOSE).bind(e.deliveryId), db.prepare(REVIVED).bind(e.deliveryId)];
    case "dead":
      return [db.prepare(CLOSE).bind(e.deliveryId), db.prepare(DIED).bind(e.deliveryId, e.resourceId, now)];
  }
}

/** Records a queue batch's steps in one D1 batch; never throws. */
export async function recordDeliveryEvents(db: D1Database, events: DeliveryEvent[], now = Date.now()): Promise<void> {
  if (events.length === 0) return;
  try {
    await db.batch(events.flatMap((e) => statementsOf(db, e, now)));
  } catch (err) {
    console.error(`delivery figures not written to D1 (${events.length} steps)`, err);
  }
}
