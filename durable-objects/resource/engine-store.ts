/** The EngineStore and PrepareContext a kind's code receives inside its ResourceObject. */
import type { Env } from "../../src/env";
import type { AnyKind, EngineStore, OutgoingRequest, PrepareContext } from "../../src/kind/kind";
import { newDeliveryId } from "../../src/delivery/events";
import { requireKind } from "../../src/resources/kinds";
import type { MetaRow } from "./meta";
import { signedDownloadUrl } from "../../src/kind/downloads";
import { deliveryCounts, deliveryPage, findDelivery } from "./delivery-views";

/**
 * What an engine's transaction recorded that is carried out once it has committed: the
 * deliveries it staged and the R2 keys it let go of (both already in the outbox tables, so
 * the alarm finishes them if this process does not).
 */
export interface AfterCommit {
  sends: string[];
  drops: string[];
}

export const afterCommit = (): AfterCommit => ({ sends: [], drops: [] });

/** Where a transaction records its sends and R2 deletes (the resource's outbox, resource/outbox.ts). */
export interface Outbox {
  pending: AfterCommit;
  send(id: string, request: OutgoingRequest): void;
  cancel(id: string): boolean;
  drop(keys: string[]): void;
}

export function engineStore(meta: MetaRow, sql: SqlStorage, env: Env, now: number, outbox?: Outbox): EngineStore {
  const need = (what: string): Outbox => {
    if (!outbox) throw new Error(`${meta.kind}: ${what} only from operations, public requests and timers`);
    return outbox;
  };
  const below = (key: string) => {
    if (!key.startsWith(`${meta.id}/`)) throw new Error(`${meta.kind}: ${key} is not below ${meta.id}/`);
  };
  return {
    resourceId: meta.id,
    sql,
    env,
    now,
    createdAt: meta.created_at,
    expiresAt: meta.expires_at,
    label: meta.label,
    notifyUrl: meta.notify_url,
    publicUrl: meta.public_id ? `${env.PUBLIC_BASE_URL || meta.base_url}/p/${meta.public_id}` : null,
    send: (request) => {
      const id = request.id ?? newDeliveryId();
      const body = request.body;
      if (body !== null && typeof body === "object") below(body.key);
      need("requests can be sent").send(id, request);
      return id;
    },
    deliveries: {
      get: (id) => findDelivery(sql, id),
      page: (statuses, limit, cursor) => deliveryPage(sql, statuses, limit, cursor),
      counts: () => deliveryCounts(sql),
      cancel: (id) => need("deliveries can be cancelled").cancel(id),
    },
    dropObjects: (keys) => {
      keys.forEach(below);
      if (keys.length) need("objects can be dropped").drop(keys);
    },
    downloadUrl: (key) => {
      below(key);
      return signedDownloadUrl(env, meta.base_url, key, meta.expires_at);
    },
  };
}

export function prepareContext(
  meta: MetaRow,
  sql: SqlStorage,
  env: Env,
  now: number,
  stillHere: () => void,
): PrepareContext {
  return { resourceId: meta.id, env, sql, now, expiresAt: meta.expires_at, baseUrl: meta.base_url, stillHere };
}

/** When the kind's own timer is next due (null: it has none, or nothing is scheduled). */
export function nextTimerAt(meta: MetaRow, config: unknown, sql: SqlStorage, env: Env, now: number): number | null {
  return requireKind(meta.kind).timer?.nextDue(engineStore(meta, sql, env, now), config) ?? null;
}

/** The kind's timer when it is due at `now`, else null. */
export function dueTimer(
  meta: MetaRow,
  config: unknown,
  sql: SqlStorage,
  env: Env,
  now: number,
): NonNullable<AnyKind["timer"]> | null {
  const timer = requireKind(meta.kind).timer;
  if (!timer) return null;
  const due = timer.nextDue(engineStore(meta, sql, env, now), config);
  return due !== null && due <= now ? timer : null;
}
