/** The generic part of a ResourceObject's storage: one row describing the resource. */
import type { EngineStore } from "../../src/kind/kind";
import { requireKind } from "../../src/resources/kinds";
import type { Json } from "../../src/json";
import type { MetaRow, RecordCore, ResourceState } from "../../src/rpc/resource";
import { orIfMissing } from "./missing-table";

export type { MetaRow, RecordCore, ResourceState };

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
  notices_sent INTEGER NOT NULL DEFAULT 0,
  -- The id of its public address /p/{public_id} (docs/api.md#public-addresses); null for kinds without one.
  public_id TEXT,
  -- The API's base URL as the resource was created, for the links it hands out (signed downloads).
  base_url TEXT NOT NULL,
  -- Set once the end has begun (its money settled): 'expired' or 'cancelled'. A failed deletion
  -- is resumed from here by the alarm, and the resource answers 410 meanwhile.
  ended TEXT
)`;

const COLUMNS = [
  "id",
  "kind",
  "owner",
  "mgmt_hash",
  "label",
  "notify_url",
  "config",
  "created_at",
  "expires_at",
  "charged",
  "signing_secret",
  "notices_sent",
  "public_id",
  "public_disabled",
  "base_url",
  "ended",
] as const;

/** Platform migration 3: the operator's switch of the public address, mirrored from D1. */
export const META_PUBLIC_DISABLED = "ALTER TABLE resource_meta ADD COLUMN public_disabled INTEGER NOT NULL DEFAULT 0";

export function insertMeta(sql: SqlStorage, meta: MetaRow): void {
  sql.exec(
    `INSERT INTO resource_meta (${COLUMNS.join(", ")}) VALUES (${COLUMNS.map(() => "?").join(", ")})`,
    ...COLUMNS.map((c) => meta[c]),
  );
}

/** The meta row, or null when this object holds no resource (never created, or ended and deleted). */
/** The meta row; null in an object that holds no resource (never created, or ended: no tables at all). */
export function readMeta(sql: SqlStorage): MetaRow | null {
  return orIfMissing(
    "resource_meta",
    () => sql.exec<MetaRow>("SELECT * FROM resource_meta").toArray()[0] ?? null,
    null,
  );
}

/**
 * The record as of now: `store` is the kind's view (for usage and status), `unsettled` what holds charged but did not
 * settle yet.
 */
export function recordOf(
  meta: MetaRow,
  config: unknown,
  state: ResourceState,
  store: EngineStore,
  unsettled: number,
): RecordCore {
  const kind = requireKind(meta.kind);
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
    public_id: meta.public_id,
    config: config as Json,
    usage: kind.usage(store, config),
    status: kind.status?.(store, config) ?? null,
  };
}
