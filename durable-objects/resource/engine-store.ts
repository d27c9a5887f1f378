/** The EngineStore a kind's code receives inside its ResourceObject. */
import type { Env } from "../../src/env";
import type { EngineStore, OutgoingRequest } from "../../src/resources/kind";
import { newDeliveryId } from "../../src/delivery/events";
import { requireKind } from "../../src/resources/registry";
import type { MetaRow } from "./meta";

/** Requests an engine sent, waiting for its transaction to commit. */
export type Outbox = { id: string; request: OutgoingRequest }[];

export function engineStore(meta: MetaRow, sql: SqlStorage, env: Env, now: number, outbox?: Outbox): EngineStore {
  return {
    resourceId: meta.id,
    sql,
    env,
    now,
    createdAt: meta.created_at,
    expiresAt: meta.expires_at,
    send: (request) => {
      if (!outbox) throw new Error(`${meta.kind}: requests can only be sent from operations and timers`);
      const id = newDeliveryId();
      outbox.push({ id, request });
      return id;
    },
  };
}

/** When the kind's own timer is next due (null: it has none, or nothing is scheduled). */
export function nextTimerAt(meta: MetaRow, sql: SqlStorage, env: Env): number | null {
  return requireKind(meta.kind).timer?.nextDue(engineStore(meta, sql, env, Date.now()), JSON.parse(meta.config)) ?? null;
}

/** The kind's timer work if it is due at `now`, with the outbox it fills; null when nothing is due. */
export function dueTimer(meta: MetaRow, sql: SqlStorage, env: Env, now: number): { run(): void; outbox: Outbox } | null {
  const timer = requireKind(meta.kind).timer;
  if (!timer) return null;
  const config = JSON.parse(meta.config) as unknown;
  const outbox: Outbox = [];
  const store = engineStore(meta, sql, env, now, outbox);
  const due = timer.nextDue(store, config);
  if (due === null || due > now) return null;
  return { run: () => timer.fire(store, config), outbox };
}
