/**
 * The delivery log as the API shows it (the Delivery schema, src/delivery/schemas.ts): one
 * delivery with its attempts, pages of them, counts by status. Sealed bodies and whole sealed
 * requests are never shown; a sealed request shows the redacted URL it was stored with.
 */
import { keysetPage } from "../../src/kind/pages";
import type { Json } from "../../src/json";
import { iso, isoOrNull } from "../../src/time";
import type { AttemptRow, DeliveryRow } from "./deliveries-tables";

/** A delivery as the log and the API show it (the Delivery schema, src/resources/delivery-routes.ts). */
export function deliveryView(sql: SqlStorage, row: DeliveryRow): Json {
  const attempts = sql
    .exec<AttemptRow>(
      "SELECT number, at, outcome, status_code, error, duration_ms, response_excerpt FROM " +
        "delivery_attempts WHERE delivery_id = ? ORDER BY number",
      row.delivery_id,
    )
    .toArray()
    .map((a) => ({ ...a, at: iso(a.at) }));
  return {
    id: row.delivery_id,
    event_type: row.event_type,
    url: row.url,
    method: row.method,
    status: row.status,
    attempts: row.attempts,
    sends: row.sends,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    settled_at: isoOrNull(row.settled_at),
    body: row.sealed || row.body_key ? null : row.body,
    body_withheld: row.sealed !== 0,
    body_stored: row.body_key !== null,
    retry_delays: row.retry_delays ? (JSON.parse(row.retry_delays) as number[]) : null,
    attempt_log: attempts,
  };
}

/** One delivery of the resource, or null. */
export function findDelivery(sql: SqlStorage, id: string): Json | null {
  const row = sql.exec<DeliveryRow>("SELECT * FROM deliveries WHERE delivery_id = ?", id).toArray()[0];
  return row ? deliveryView(sql, row) : null;
}

/** Deliveries oldest first, of the given statuses (all when empty), after the cursor (a seq). */
export function deliveryPage(
  sql: SqlStorage,
  statuses: string[],
  limit: number,
  cursor: string | null,
): { items: Json[]; next_cursor: string | null } {
  const filter = statuses.length ? `AND status IN (${statuses.map(() => "?").join(",")})` : "";
  const rows = sql
    .exec<DeliveryRow>(
      `SELECT * FROM deliveries WHERE seq > ? ${filter} ORDER BY seq LIMIT ?`,
      Number(cursor ?? 0) || 0,
      ...statuses,
      limit + 1,
    )
    .toArray();
  return keysetPage(
    rows,
    limit,
    (r) => r.seq,
    (r) => deliveryView(sql, r),
  );
}

export function deliveryCounts(sql: SqlStorage): Record<string, number> {
  return Object.fromEntries(
    sql
      .exec<{ status: string; n: number }>("SELECT status, COUNT(*) AS n FROM deliveries GROUP BY status")
      .toArray()
      .map((r) => [r.status, r.n]),
  );
}
