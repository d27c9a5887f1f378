/**
 * Creates and extends are not charged against a hold (billing.ts) but straight at the account,
 * before the work, and given back if the work fails. The charge (the account's ledger) and the work
 * (this object's storage, and for a creation the D1 index) cannot share a transaction, so before it
 * pays the object writes the charge down as pending, with its alarm set as the backstop, and crosses
 * it off with the work it paid for. A process that dies in between leaves the row behind: the alarm
 * gives the charge back, found by its resource, operation and request (its id may never have arrived),
 * and undoes a creation too (core.ts), whose caller never saw the management token.
 */
import type { Env } from "../../src/env";
import { AppError, unwrap } from "../../src/http/errors";
import { accountStub } from "../../src/stubs";
import type { Payer } from "../../src/money/payment";
import { orIfMissing } from "./missing-table";

/** The alarm's wait before it gives back a pending charge: far past a call's own time, D1 writes included. */
export const PENDING_RECOVERY_MS = 5 * 60_000;

// A type, not an interface: rows read with sql.exec<T> must be plain records.
export type PendingCharge = {
  request_id: string;
  resource_id: string;
  /** The ledger's name for the charge: `<kind>.create` or `<kind>.extend`. */
  operation: string;
  /** The account charged, when a credit token pays (x402 and free calls are paid outside the object). */
  account_id: string | null;
  /**
   * Real time, when it was written down: the charge is among the account ledger's rows since (about: clocks differ).
   */
  started_at: number;
  /** "x402": a creation paid by an x402 payment the worker settles after it (settledCreate crosses it off). */
  settles: string | null;
};

const TABLE = "pending_charges";

/** Made by the first direct charge (a creation's, before the other tables), and by a migration in older resources. */
export const PENDING_CHARGES_TABLE =
  `CREATE TABLE IF NOT EXISTS ${TABLE} (request_id TEXT PRIMARY KEY, resource_id TEXT NOT NULL, operation ` +
  `TEXT NOT NULL, account_id TEXT, started_at INTEGER NOT NULL, settles TEXT)`;

/**
 * Platform migration 7: a creation may wait for its x402 settlement (tables made before have no such column; new ones
 * have it).
 */
export function addSettlesColumn(sql: SqlStorage): void {
  const columns = sql
    .exec<{ name: string }>(`SELECT name FROM pragma_table_info('${TABLE}')`)
    .toArray()
    .map((c) => c.name);
  if (!columns.includes("settles")) sql.exec(`ALTER TABLE ${TABLE} ADD COLUMN settles TEXT`);
}

/** A creation paid by x402 that waits for the worker to settle the payment. */
export const awaitsSettlement = (pending: PendingCharge): boolean => pending.settles === "x402";

/** When the alarm must look at the creations still waiting for their settlement (real time), or null. */
export function settlementsDueAt(sql: SqlStorage): number | null {
  return (
    orIfMissing(
      TABLE,
      () =>
        sql.exec<{ at: number | null }>(`SELECT MIN(started_at) AS at FROM ${TABLE} WHERE settles IS NOT NULL`).one()
          .at,
      null,
    ) ?? null
  );
}

/**
 * Whether the x402 payment of a creation whose worker died before saying so settled (or was submitted and
 * may still land): then the resource is paid for and stays. Otherwise the claim is released, so the payer's
 * authorization can be used again, and the caller undoes the creation.
 */
export async function settledInD1(db: D1Database, requestId: string): Promise<boolean> {
  const row = await db
    .prepare("SELECT status, tx_hash FROM payments WHERE request_id = ?")
    .bind(requestId)
    .first<{ status: string; tx_hash: string | null }>();
  if (row && (row.status === "settled" || row.tx_hash)) return true;
  await db
    .prepare("DELETE FROM payments WHERE request_id = ? AND status = 'claimed' AND tx_hash IS NULL")
    .bind(requestId)
    .run();
  return false;
}

export const isCreation = (pending: PendingCharge): boolean => pending.operation.endsWith(".create");

/** The charges written down and not crossed off, oldest first. */
export function pendingCharges(sql: SqlStorage): PendingCharge[] {
  // The table is missing in an object with no resource, or one whose resource ended while a charge was under way.
  return orIfMissing(TABLE, () => {
    // Every alarm asks, and the answer is almost always none: count(*) asks the b-tree without a scan step.
    if (!sql.exec<{ n: number }>(`SELECT count(*) AS n FROM ${TABLE}`).one().n) return [];
    return sql
      .exec<PendingCharge>(
        `SELECT request_id, resource_id, operation, account_id, started_at, settles FROM ${TABLE} ORDER BY started_at`,
      )
      .toArray();
  }, []);
}

/** One direct charge: written down, taken, then crossed off with its work or given back. */
export class DirectCharge {
  readonly pending: PendingCharge;
  /**
   * The charge's id; null: nothing was charged (yet, or x402 paid); undefined: not known (a call that failed may have
   * been taken).
   */
  charged: number | null | undefined = null;
  /** Whose money paid, once taken: a sandbox's id (a creation then joins that sandbox), or null. */
  paidBySandbox: string | null = null;

  constructor(
    private readonly env: Env,
    private readonly sql: SqlStorage,
    private readonly payer: Payer,
    private readonly amount: number,
    call: { resourceId: string; operation: string; requestId: string },
    /** The resource's sandbox (null: none), or undefined for a creation, which the money decides (sandbox-clock.ts). */
    private readonly sandboxId?: string | null,
  ) {
    this.pending = {
      request_id: call.requestId,
      resource_id: call.resourceId,
      operation: call.operation,
      account_id: payer.type === "credit" ? payer.accountId : null,
      started_at: Date.now(),
      settles: payer.type === "prepaid" && payer.x402 && call.operation.endsWith(".create") ? "x402" : null,
    };
  }

  /** Writes the charge down (the caller then makes sure the alarm is set within PENDING_RECOVERY_MS). */
  record(): void {
    this.sql.exec(PENDING_CHARGES_TABLE);
    const p = this.pending;
    this.sql.exec(
      `INSERT INTO ${TABLE} (request_id, resource_id, operation, account_id, started_at, settles) VALUES ` +
        `(?, ?, ?, ?, ?, ?)`,
      p.request_id,
      p.resource_id,
      p.operation,
      p.account_id,
      p.started_at,
      p.settles,
    );
  }

  /** Takes the amount, once, before the work (nothing when x402 paid it or it is free). */
  async take(): Promise<void> {
    if (this.payer.type === "prepaid" || this.amount === 0) return;
    const { accountId, tokenId, tokenHash } = this.payer;
    this.charged = undefined;
    try {
      const { pending: p } = this;
      const taken = unwrap(
        await accountStub(this.env, accountId).charge({
          tokenId,
          tokenHash,
          amount: this.amount,
          operation: p.operation,
          resourceId: p.resource_id,
          requestId: p.request_id,
          sandboxId: this.sandboxId,
        }),
      );
      this.charged = taken.chargeId;
      this.paidBySandbox = taken.sandboxId;
    } catch (err) {
      if (err instanceof AppError) this.charged = null; // the account refused: nothing was taken
      throw err;
    }
  }

  /** The work it paid for is done: called in the work's own transaction, or right after its last write. */
  crossOff(): void {
    crossOff(this.sql, this.pending.request_id);
  }

  /** Gives the charge back, then crosses it off. */
  async giveBack(): Promise<void> {
    await giveBack(this.env, this.pending, this.charged);
    this.charged = null;
    this.crossOff();
  }
}

export function crossOff(sql: SqlStorage, requestId: string): void {
  orIfMissing(TABLE, () => sql.exec(`DELETE FROM ${TABLE} WHERE request_id = ?`, requestId), null);
}

/**
 * Gives back a pending charge: by its id when known, else found at the account (if it was taken at
 * all); `charged` null: nothing was taken. Idempotent, so an alarm that runs again is harmless.
 */
export async function giveBack(env: Env, pending: PendingCharge, charged?: number | null): Promise<void> {
  if (!pending.account_id || charged === null) return;
  // The account runs on another machine's clock: a minute's margin (the request id is what makes the match exact).
  const which =
    charged === undefined
      ? { resourceId: pending.resource_id, operation: pending.operation, since: pending.started_at - 60_000 }
      : { chargeId: charged };
  await accountStub(env, pending.account_id).refund({ ...which, requestId: pending.request_id });
}
