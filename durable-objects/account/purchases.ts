/**
 * Money coming into an account (see AccountObject): the first purchase that opens it, top-ups, and a top-up undone
 * when its payment failed to settle. Each moves the balance and writes its ledger row in one transaction.
 */
import type { AccountApi, Credential } from "../../src/rpc/account";
import type { AccountStore } from "./store";
import type { SandboxMoney } from "./sandbox-money";

export type OpenInput = Parameters<AccountApi["open"]>[0];
export type TopUpInput = Credential & { amount: number; ref: string; requestId: string; expiresAt: number };

export class Purchases {
  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly store: AccountStore,
    private readonly sandbox: SandboxMoney,
  ) {}

  private get sql(): SqlStorage {
    return this.storage.sql;
  }

  /** Writes the account, its root token and the first purchase. */
  open(input: OpenInput): void {
    const r = input.root;
    this.storage.transactionSync(() => {
      this.sql.exec("INSERT INTO account (id, balance) VALUES (1, ?)", input.amount);
      this.sql.exec(
        "INSERT INTO tokens (token_id, parent_id, token_hash, label, cap, created_at, expires_at) VALUES " +
          "(?, NULL, ?, ?, NULL, ?, ?)",
        r.token_id,
        r.token_hash,
        r.label,
        r.created_at,
        r.expires_at,
      );
      this.store.record({
        at: Date.now(),
        token_id: r.token_id,
        type: "purchase",
        operation: input.sandboxId ? "sandboxes.create" : "credits.purchase",
        resource_id: null,
        amount: input.amount,
        request_id: input.requestId,
        ref: input.ref,
      });
      if (input.sandboxId) this.sandbox.mark(input.sandboxId);
    });
  }

  /** Adds the funds through `tokenId`, renewing the root token's lifetime to at least `expiresAt`. */
  topUp(input: TopUpInput, tokenId: string): void {
    this.storage.transactionSync(() => {
      this.sql.exec("UPDATE account SET balance = balance + ?", input.amount);
      this.sql.exec("UPDATE tokens SET expires_at = max(expires_at, ?) WHERE parent_id IS NULL", input.expiresAt);
      this.store.record({
        at: Date.now(),
        token_id: tokenId,
        type: "topup",
        operation: "credits.topup",
        resource_id: null,
        amount: input.amount,
        request_id: input.requestId,
        ref: input.ref,
      });
    });
  }

  /** Undoes the top-up `ref`, if it was recorded. */
  revertTopUp(ref: string): void {
    this.storage.transactionSync(() => {
      const row = this.sql
        .exec<{ seq: number; amount: number }>("SELECT seq, amount FROM ledger WHERE type = 'topup' AND ref = ?", ref)
        .toArray()[0];
      if (!row) return;
      this.sql.exec("UPDATE account SET balance = balance - ?", row.amount);
      this.sql.exec("DELETE FROM ledger WHERE seq = ?", row.seq);
    });
  }
}
