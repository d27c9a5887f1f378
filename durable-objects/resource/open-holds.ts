/**
 * The holds a resource's accounts granted it (billing.ts), as rows of billing_holds and billing_charges, mirrored in
 * memory so the hot path is one INSERT: what each has used, which are closed to new charges, and when each is to
 * be settled.
 */
import type { Settlement } from "../../src/rpc/account";
import type { Hold } from "./billing-tables";

/** The holds of one account, closed and ready to settle in one call. */
export type Batch = { accountId: string; settlements: Settlement[] };

export class OpenHolds {
  private holdsOf: Map<string, Hold> | undefined;

  constructor(
    private readonly sql: SqlStorage,
    /** Called inside the transaction that forgets settled holds, with what they captured. */
    private readonly onSettled: (captured: number) => void,
  ) {}

  all(): Map<string, Hold> {
    if (!this.holdsOf) {
      const rows = this.sql.exec<Hold>(
        "SELECT h.*, coalesce((SELECT sum(amount) FROM billing_charges c WHERE c.hold_id = h.hold_id), 0) " +
          "AS used FROM billing_holds h",
      );
      this.holdsOf = new Map(rows.toArray().map((h) => [h.hold_id, h]));
    }
    return this.holdsOf;
  }

  /** Writes a call's charge against `hold`, inside the transaction of the work it pays for. */
  charge(hold: Hold, price: number, charge: { operation: string; requestId: string }): void {
    this.sql.exec(
      "INSERT INTO billing_charges (hold_id, at, operation, amount, request_id) VALUES (?, ?, ?, ?, ?)",
      hold.hold_id,
      Date.now(),
      charge.operation,
      price,
      charge.requestId,
    );
    // Last, so a call that throws leaves the mirror as its rolled-back savepoint leaves the table. (Should the
    // batch's commit fail, the runtime resets the object, and the mirror is read again from the table.)
    hold.used += price;
  }

  /** Charged through holds but not settled yet. */
  unsettled(): number {
    let total = 0;
    for (const hold of this.all().values()) total += hold.used;
    return total;
  }

  /** When the next settlement is due, for the resource's alarm. */
  nextFlushAt(): number | null {
    let next: number | null = null;
    for (const hold of this.all().values()) next = next === null ? hold.flush_at : Math.min(next, hold.flush_at);
    return next;
  }

  /** Keeps a hold the account granted. */
  add(hold: Hold): void {
    this.sql.exec(
      "INSERT INTO billing_holds (hold_id, account_id, token_id, token_hash, amount, flush_at, expires_at) " +
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
      hold.hold_id,
      hold.account_id,
      hold.token_id,
      hold.token_hash,
      hold.amount,
      hold.flush_at,
      hold.expires_at,
    );
    this.all().set(hold.hold_id, hold);
  }

  /** Closes matching holds to new charges and returns them with their charges, grouped by account. */
  close(match: (hold: Hold) => boolean): Batch[] {
    const byAccount = new Map<string, Batch>();
    for (const hold of this.all().values()) {
      if (!match(hold)) continue;
      if (!hold.closed) {
        hold.closed = 1;
        this.sql.exec("UPDATE billing_holds SET closed = 1 WHERE hold_id = ?", hold.hold_id);
      }
      const charges = this.sql
        .exec<{ charges: string }>(
          "SELECT json_group_array(json_array(at, operation, amount, request_id) ORDER BY seq) AS charges " +
            "FROM billing_charges WHERE hold_id = ?",
          hold.hold_id,
        )
        .one().charges;
      const batch = byAccount.get(hold.account_id) ?? { accountId: hold.account_id, settlements: [] };
      batch.settlements.push({ holdId: hold.hold_id, charges });
      byAccount.set(hold.account_id, batch);
    }
    return [...byAccount.values()];
  }

  /** The account could not be reached: these are settled again at `at`. */
  retryAt(settlements: Settlement[], at: number): void {
    for (const s of settlements) {
      const hold = this.all().get(s.holdId);
      if (hold) hold.flush_at = at;
      this.sql.exec("UPDATE billing_holds SET flush_at = ? WHERE hold_id = ?", at, s.holdId);
    }
  }

  /** The account applied these settlements: their rows go. */
  forget(settlements: Settlement[]): void {
    let captured = 0;
    for (const s of settlements) {
      const hold = this.all().get(s.holdId);
      if (!hold) continue;
      captured += hold.used;
      this.sql.exec("DELETE FROM billing_charges WHERE hold_id = ?", s.holdId);
      this.sql.exec("DELETE FROM billing_holds WHERE hold_id = ?", s.holdId);
      this.all().delete(s.holdId);
    }
    this.onSettled(captured);
  }
}
