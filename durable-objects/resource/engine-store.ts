/** The EngineStore and PrepareContext a kind's code receives inside its ResourceObject. */
import type { Env } from "../../src/env";
import type { AnyKind, EngineStore, OutgoingRequest, PrepareContext } from "../../src/resources/kind";
import { newDeliveryId } from "../../src/delivery/events";
import { requireKind } from "../../src/resources/registry";
import type { MetaRow } from "./meta";
import { signedDownloadUrl } from "../../src/resources/downloads";

/** What an engine's transaction asked for that may only happen once it has committed. */
export interface AfterCommit {
  sends: { id: string; request: OutgoingRequest }[];
  /** R2 keys to delete. */
  drops: string[];
}

export const afterCommit = (): AfterCommit => ({ sends: [], drops: [] });

export function engineStore(meta: MetaRow, sql: SqlStorage, env: Env, now: number, pending?: AfterCommit): EngineStore {
  const need = (what: string): AfterCommit => {
    if (!pending) throw new Error(`${meta.kind}: ${what} only from operations, public requests and timers`);
    return pending;
  };
  return {
    resourceId: meta.id,
    sql,
    env,
    now,
    createdAt: meta.created_at,
    expiresAt: meta.expires_at,
    notifyUrl: meta.notify_url,
    send: (request) => {
      const id = request.id ?? newDeliveryId();
      need("requests can be sent").sends.push({ id, request });
      return id;
    },
    dropObjects: (keys) => {
      const prefix = `${meta.id}/`;
      const outside = keys.find((k) => !k.startsWith(prefix));
      if (outside) throw new Error(`${meta.kind}: ${outside} is not below ${prefix}`);
      need("objects can be dropped").drops.push(...keys);
    },
    downloadUrl: (key) => {
      if (!key.startsWith(`${meta.id}/`)) throw new Error(`${meta.kind}: ${key} is not below ${meta.id}/`);
      return signedDownloadUrl(env, meta.base_url, key, meta.expires_at);
    },
  };
}

export function prepareContext(meta: MetaRow, sql: SqlStorage, env: Env, now: number): PrepareContext {
  return { resourceId: meta.id, env, sql, now, expiresAt: meta.expires_at, baseUrl: meta.base_url };
}

/** When the kind's own timer is next due (null: it has none, or nothing is scheduled). */
export function nextTimerAt(meta: MetaRow, config: unknown, sql: SqlStorage, env: Env, now: number): number | null {
  return requireKind(meta.kind).timer?.nextDue(engineStore(meta, sql, env, now), config) ?? null;
}

/** The kind's timer when it is due at `now`, else null. */
export function dueTimer(meta: MetaRow, config: unknown, sql: SqlStorage, env: Env, now: number): NonNullable<AnyKind["timer"]> | null {
  const timer = requireKind(meta.kind).timer;
  if (!timer) return null;
  const due = timer.nextDue(engineStore(meta, sql, env, now), config);
  return due !== null && due <= now ? timer : null;
}
