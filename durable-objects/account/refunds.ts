/**
 * Giving charges back (see AccountObject): a call that failed after it was charged, or one the operator refunds.
 * A charge is given back at most once: its refund row names it.
 */
import type { LedgerRow, RefundRequest } from "../../src/rpc/account";
import type { AccountStore } from "./store";

export class Refunds {
  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly store: AccountStore,
  ) {}

  private get sql(): SqlStorage {
    return this.storage.sql;
  }

  /** Gives back the one charge `input` names, if it stands (AccountObject.refund). */
  refund(input: RefundRequest): void {
    this.storage.transactionSync(() => {
      const charge = (
        "chargeId" in input
          ? this.sql.exec<LedgerRow>("SELECT * FROM ledger WHERE seq = ? AND type = 'charge'", input.chargeId)
          : input.lostAnswer
            ? this.sql.exec<LedgerRow>(
                `SELECT * FROM ledger c WHERE at >= ? AND type = 'charge' AND resource_id = ? AND operation = ?
                 AND NOT EXISTS (SELECT 1 FROM ledger r WHERE r.type = 'refund' AND r.ref = CAST(c.seq AS TEXT))`,
                input.since,
                input.resourceId,
                input.operation,
              )
            : this.sql.exec<LedgerRow>(
                "SELECT * FROM ledger WHERE at >= ? AND type = 'charge' AND resource_id = ? AND operation " +
                  "= ? AND request_id = ?",
                input.since,
                input.resourceId,
                input.operation,
                input.requestId,
              )
      ).toArray()[0];
      if (charge) this.giveBack(charge, input.requestId);
    });
  }

  /** Gives back what one call was charged to the tokens `ids` (AccountObject.refundCall); answers what it gave. */
  refundCall(ids: Set<string>, callRequestId: string, requestId: string): { refunded: number; charges: number } {
    let refunded = 0;
    let charges = 0;
    this.storage.transactionSync(() => {
      for (const charge of this.sql
        .exec<LedgerRow>("SELECT * FROM ledger WHERE type = 'charge' AND request_id = ?", callRequestId)
        .toArray()) {
        if (!ids.has(charge.token_id) || !this.giveBack(charge, requestId)) continue;
        refunded += charge.amount;
        charges++;
      }
    });
    return { refunded, charges };
  }

  /**
   * Returns one charge to its token's chain (inside the caller's transaction); false when it was given back already.
   */
  private giveBack(charge: LedgerRow, requestId: string): boolean {
    if (this.sql.exec("SELECT 1 FROM ledger WHERE type = 'refund' AND ref = ?", String(charge.seq)).toArray().length)
      return false;
    const token = this.store.token(charge.token_id);
    if (!token) return false;
    this.store.take(this.store.chainOf(token), -charge.amount, "spent");
    this.store.record({ ...charge, at: Date.now(), type: "refund", request_id: requestId, ref: String(charge.seq) });
    return true;
  }
}
