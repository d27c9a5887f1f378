/** The D1 resource index: written when a resource is created, extended or ends; the tombstone afterwards. */
import type { MetaRow } from "../rpc/resource";

/** Ended resources stay readable (state only) this long, then 404. */
const TOMBSTONE_MS = 30 * 86400 * 1000;

export interface IndexRow {
  id: string;
  kind: string;
  state: "active" | "expired" | "cancelled";
  mgmt_hash: string;
  label: string | null;
  created_at: number;
  expires_at: number;
  ended_at: number | null;
  public_id: string | null;
}

export async function insertResourceIndex(db: D1Database, m: MetaRow): Promise<void> {
  await db
    .prepare(
      "INSERT INTO resources (id, kind, owner, state, label, mgmt_hash, created_at, expires_at, public_id) " +
        "VALUES (?, ?, ?, 'active', ?, ?, ?, ?, ?)",
    )
    .bind(m.id, m.kind, m.owner, m.label, m.mgmt_hash, m.created_at, m.expires_at, m.public_id)
    .run();
}

/** Forgets a resource whose creation was undone: it never existed for its caller, so it leaves no tombstone. */
export async function deleteResourceIndex(db: D1Database, id: string): Promise<void> {
  await db.prepare("DELETE FROM resources WHERE id = ?").bind(id).run();
}

export async function updateResourceExpiry(db: D1Database, id: string, expiresAt: number): Promise<void> {
  await db.prepare("UPDATE resources SET expires_at = ? WHERE id = ?").bind(expiresAt, id).run();
}

/** The tombstone: the final state, when it ended, and the last expiry (an extend's own index write may have failed). */
export async function endResourceIndex(
  db: D1Database,
  id: string,
  state: "expired" | "cancelled",
  at: number,
  expiresAt: number,
): Promise<void> {
  await db
    .prepare("UPDATE resources SET state = ?, ended_at = ?, expires_at = ? WHERE id = ? AND state = 'active'")
    .bind(state, at, expiresAt, id)
    .run();
}

export async function findResourceIndex(db: D1Database, id: string): Promise<IndexRow | null> {
  return db
    .prepare(
      "SELECT id, kind, state, mgmt_hash, label, created_at, expires_at, ended_at, public_id FROM " +
        "resources WHERE id = ?",
    )
    .bind(id)
    .first<IndexRow>();
}

/**
 * Daily sweep: tombstones older than 30 days go, so the id answers 404 from then on; so do x402 claims a month past
 * their authorization.
 */
export async function sweepTombstones(db: D1Database, now: number): Promise<void> {
  await db
    .prepare("DELETE FROM resources WHERE ended_at IS NOT NULL AND ended_at < ?")
    .bind(now - TOMBSTONE_MS)
    .run();
  // An x402 claim whose authorization lapsed a month ago: settled, or never sent to the chain (its call failed and
  // its process died before releasing it; the payer's money never moved). One submitted and not confirmed keeps
  // its hash for reconciliation.
  await db
    .prepare("DELETE FROM payments WHERE valid_before < ? AND (status = 'settled' OR tx_hash IS NULL)")
    .bind(now - TOMBSTONE_MS)
    .run();
}

export interface PublicAddressTarget {
  id: string;
  kind: string;
  state: IndexRow["state"];
  disabled: number;
}

/**
 * The resource behind a public address of the first layout (its id names nothing), and whether the operator disabled
 * it.
 */
export async function findPublicAddress(db: D1Database, publicId: string): Promise<PublicAddressTarget | null> {
  return db
    .prepare(
      `SELECT id, kind, state,
         EXISTS (SELECT 1 FROM disabled_public_addresses d WHERE d.public_id = r.public_id) AS disabled
       FROM resources r WHERE r.public_id = ?`,
    )
    .bind(publicId)
    .first<PublicAddressTarget>();
}
