/** The generic part of a ResourceObject's storage: one row describing the resource. */
import type { EngineStore } from "../../src/resources/kind";
import { requireKind } from "../../src/resources/registry";
import type { Json, JsonObject } from "../../src/json";

export const META_TABLE = `CREATE TABLE resource_meta (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  owner TEXT NOT NULL,
  mgmt_hash TEXT NOT NULL,
  label TEXT,
  notify_url TEXT,
  config TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  charged INTEGER NOT NULL,
  -- The whsec_ secret of outbound events, sealed (auth/sealing.ts); null without notify_url.
  signing_secret TEXT,
  -- Bits of the resource.expiring notices already sent (lifecycle-notices.ts).
  notices_sent INTEGER NOT NULL DEFAULT 0
)`;

export type MetaRow = {
  id: string;
  kind: string;
  owner: string;
  mgmt_hash: string;
  label: string | null;
  notify_url: string | null;
  config: string;
  created_at: number;
  expires_at: number;
  charged: number;
  signing_secret: string | null;
  notices_sent: number;
};

export type ResourceState = "active" | "expired" | "cancelled";

/** The record of API.md §4 without `urls`, which the worker adds from the request's origin. */
export interface RecordCore {
  id: string;
  kind: string;
  family: string;
  state: ResourceState;
  label: string | null;
  created_at: string;
  expires_at: string;
  charged_micro: number;
  notify_url: string | null;
  config: Json;
  usage: JsonObject;
  status: JsonObject | null;
}

/** The record as of now: `store` is the kind's view (for usage and status), `unsettled` what holds charged but did not settle yet. */
export function recordOf(meta: MetaRow, state: ResourceState, store: EngineStore, unsettled: number): RecordCore {
  const kind = requireKind(meta.kind);
  const config = JSON.parse(meta.config) as unknown;
  return {
    id: meta.id,
    kind: meta.kind,
    family: kind.family,
    state,
    label: meta.label,
    created_at: new Date(meta.created_at).toISOString(),
    expires_at: new Date(meta.expires_at).toISOString(),
    charged_micro: meta.charged + unsettled,
    notify_url: meta.notify_url,
    config: config as Json,
    usage: kind.usage(store, config),
    status: kind.status?.(store, config) ?? null,
  };
}
