/**
 * A wakeup's state: one row. The resource's alarm fires it (timer), or an
 * operation does (fire now); the delivery pipeline signs, sends and retries
 * the call and reports back how it ended.
 */
import { AppError } from "../../../http/errors";
import { notBefore, isoOrNull } from "../../../time";
import type { EngineStore } from "../../../kind/kind";
import type { WakeupConfig } from "./schema";
import { outgoingRequest } from "../../../delivery/outbound";

type Status = "scheduled" | "firing" | "delivered" | "failed";

type Row = {
  fire_at: number;
  status: Status;
  delivery_id: string | null;
  fired_at: number | null;
};

export function fireAt(now: number, when: { at?: string; delay_seconds?: number }): number {
  return when.at !== undefined ? notBefore(when.at, now) : now + (when.delay_seconds ?? 0) * 1000;
}

/** The module's tables as the kind's first migration creates them (see the kind's `migrations`). */
export const TABLES = [
  "CREATE TABLE wakeup (id INTEGER PRIMARY KEY CHECK (id = 1), fire_at INTEGER NOT NULL, status TEXT NOT " +
    "NULL, delivery_id TEXT, fired_at INTEGER)",
];

export function init(store: EngineStore, config: WakeupConfig): void {
  store.sql.exec(
    "INSERT INTO wakeup (id, fire_at, status) VALUES (1, ?, 'scheduled')",
    fireAt(store.createdAt, config),
  );
}

function read(store: EngineStore): Row {
  return store.sql.exec<Row>("SELECT fire_at, status, delivery_id, fired_at FROM wakeup").one();
}

export function view(store: EngineStore, config: WakeupConfig) {
  const row = read(store);
  return {
    status: row.status,
    fire_at: new Date(row.fire_at).toISOString(),
    fired_at: isoOrNull(row.fired_at),
    delivery_id: row.delivery_id,
    url: config.url,
    method: config.method,
  };
}

/** Sends the configured call now. */
export function fire(store: EngineStore, config: WakeupConfig) {
  if (read(store).status === "firing")
    throw new AppError("conflict", "The wakeup's call is being delivered; wait for it to finish.");
  const deliveryId = store.send(outgoingRequest(config, "wakeup.fired"));
  store.sql.exec("UPDATE wakeup SET status = 'firing', delivery_id = ?, fired_at = ?", deliveryId, store.now);
  return view(store, config);
}

export function reschedule(store: EngineStore, config: WakeupConfig, at: number) {
  if (read(store).status === "firing")
    throw new AppError("conflict", "The wakeup's call is being delivered; reschedule once it finished.");
  if (at < store.now - 1000)
    throw new AppError("validation_failed", "The new time is in the past.", {
      errors: [{ path: "at", message: "is in the past" }],
    });
  store.sql.exec("UPDATE wakeup SET fire_at = ?, status = 'scheduled'", at);
  return view(store, config);
}

export function nextDue(store: EngineStore): number | null {
  const row = read(store);
  return row.status === "scheduled" ? row.fire_at : null;
}

export function finished(store: EngineStore, deliveryId: string, outcome: "delivered" | "aborted" | "dead"): void {
  if (read(store).delivery_id !== deliveryId) return; // an earlier call, replayed by hand
  store.sql.exec("UPDATE wakeup SET status = ?", outcome === "delivered" ? "delivered" : "failed");
}
