/** The EngineStore a kind's code receives inside its ResourceObject. */
import type { Env } from "../../src/env";
import type { EngineStore, OutgoingRequest } from "../../src/resources/kind";
import { newDeliveryId } from "../../src/delivery/events";
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
    send: (request) => {
      if (!outbox) throw new Error(`${meta.kind}: requests can only be sent from operations and timers`);
      const id = newDeliveryId();
      outbox.push({ id, request });
      return id;
    },
  };
}
