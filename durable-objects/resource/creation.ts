/**
 * A creation under way. Paying for a resource (its account's ledger), making it (this object's
 * storage) and indexing it (D1) cannot share one transaction, so the object writes down that it is
 * being made before it pays, with its alarm set as the backstop. A process that dies before the
 * creation is finished leaves the record behind, and the alarm undoes what got done: the charge is
 * refunded, the index row deleted, the storage cleared. The caller never saw the resource's
 * management token, so a half-made resource is a failed call, and a failed call is not charged.
 */

/** The alarm's wait before it undoes an unfinished creation: far past a creation's own time, D1 write included. */
export const CREATION_RECOVERY_MS = 5 * 60_000;

// A type, not an interface: rows read with sql.exec<T> must be plain records.
export type Creation = {
  id: string;
  /** The ledger's name for the charge (`<kind>.create`). */
  operation: string;
  /** The account charged, when a credit token pays (x402 and free calls are paid outside the object). */
  account_id: string | null;
  /** Real time (the account's clock), so the refund finds the charge among the ledger's rows since. */
  started_at: number;
  request_id: string;
};

const TABLE = "resource_creation";

export function beginCreation(sql: SqlStorage, creation: Creation): void {
  sql.exec(`CREATE TABLE ${TABLE} (id TEXT NOT NULL, operation TEXT NOT NULL, account_id TEXT, started_at INTEGER NOT NULL, request_id TEXT NOT NULL)`);
  sql.exec(`INSERT INTO ${TABLE} VALUES (?, ?, ?, ?, ?)`, creation.id, creation.operation, creation.account_id, creation.started_at, creation.request_id);
}

/** The record of a creation that was begun and not finished, if there is one. */
export function unfinishedCreation(sql: SqlStorage): Creation | null {
  if (!sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", TABLE).toArray().length) return null;
  return sql.exec<Creation>(`SELECT id, operation, account_id, started_at, request_id FROM ${TABLE}`).toArray()[0] ?? null;
}

/** The resource is made, paid and indexed: from here it is the caller's. */
export function finishCreation(sql: SqlStorage): void {
  sql.exec(`DROP TABLE ${TABLE}`);
}
