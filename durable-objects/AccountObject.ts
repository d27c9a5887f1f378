/**
 * One per root credit token: the balance, the sub-token tree with caps and
 * lifetimes, holds, and a ledger row for every movement. A Durable Object runs
 * one event at a time and SQLite calls are synchronous, so each check and the
 * write after it are atomic without locks: concurrent spends never overspend.
 *
 * Two ways to spend. `charge` takes one amount now (creates, extends). `hold`
 * reserves a float for one resource's data-plane calls, which the resource
 * spends locally, recording each charge atomically with the work, and settles
 * here in one piece (`settle`): the hot path then needs one Durable Object
 * round trip, not two. Held money counts against the balance and every cap
 * from the moment it is reserved, so holds never let a token overspend.
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../src/env";
import { AppError, capture, unwrap, type Result } from "../src/http/errors";
import { resourceStub } from "../src/stubs";
import { ACCOUNT_SCHEMA } from "./account/schema";
import { AccountStore } from "./account/store";
import { SandboxMoney } from "./account/sandbox-money";
import type {
  AccountApi,
  BalanceView,
  ChargeRequest,
  Credential,
  HoldGrant,
  HoldRequest,
  LedgerRow,
  RefundRequest,
  Settlement,
  TokenRow,
} from "../src/rpc/account";

export type { BalanceView, ChargeRequest, Credential, HoldGrant, HoldRequest, LedgerRow, Settlement, TokenRow };

/** A hold nobody settled (its resource unreachable) is released after this. */
const HOLD_LIFETIME_MS = 60 * 60 * 1000;

export class AccountObject extends DurableObject<Env> implements AccountApi {
  private readonly store: AccountStore;
  private readonly sql: SqlStorage;
  private readonly sandbox: SandboxMoney;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.store = new AccountStore(this.sql);
    this.sandbox = new SandboxMoney(this.sql);
    // Not awaited (a constructor cannot be): the runtime holds every call until it has run.
    void ctx.blockConcurrencyWhile(async () => {
      this.sql.exec(ACCOUNT_SCHEMA);
    });
  }

  /** Creates the account with its root token and first purchase. */
  open(input: {
    root: Omit<TokenRow, "spent" | "held" | "cap" | "parent_id">;
    amount: number;
    ref: string;
    requestId: string;
    sandboxId?: string;
  }) {
    return capture(() => {
      if (this.store.balance() !== null) throw new AppError("conflict", "This account already exists.");
      const r = input.root;
      this.ctx.storage.transactionSync(() => {
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
      return this.store.view(r.token_id);
    });
  }

  /**
   * Undoes `open` when the payment behind it could not be settled (nothing was returned to the client),
   * or closes a sandbox's account when the sandbox ends. The empty tables stay, so its tokens are then unknown.
   */
  async void(): Promise<void> {
    await this.ctx.storage.deleteAll();
    this.sql.exec(ACCOUNT_SCHEMA);
    this.sandbox.forget();
  }

  /** Adds funds; the root token's lifetime is renewed to at least `expiresAt`. */
  topUp(input: Credential & { amount: number; ref: string; requestId: string; expiresAt: number }) {
    return capture(() => {
      const [token] = this.store.authenticate(input);
      this.sandbox.refuseTopUp();
      this.ctx.storage.transactionSync(() => {
        this.sql.exec("UPDATE account SET balance = balance + ?", input.amount);
        this.sql.exec("UPDATE tokens SET expires_at = max(expires_at, ?) WHERE parent_id IS NULL", input.expiresAt);
        this.store.record({
          at: Date.now(),
          token_id: token!.token_id,
          type: "topup",
          operation: "credits.topup",
          resource_id: null,
          amount: input.amount,
          request_id: input.requestId,
          ref: input.ref,
        });
      });
      return this.store.view(token!.token_id);
    });
  }

  /** Undoes a top-up whose payment failed to settle. */
  async revertTopUp(input: { ref: string }): Promise<void> {
    this.ctx.storage.transactionSync(() => {
      const row = this.sql
        .exec<{ seq: number; amount: number }>(
          "SELECT seq, amount FROM ledger WHERE type = 'topup' AND ref = ?",
          input.ref,
        )
        .toArray()[0];
      if (!row) return;
      this.sql.exec("UPDATE account SET balance = balance - ?", row.amount);
      this.sql.exec("DELETE FROM ledger WHERE seq = ?", row.seq);
    });
  }

  /** The token's balance, after every open hold is settled so the figures are exact. */
  balance(input: Credential): Promise<Result<BalanceView>> {
    return capture(async () => {
      this.store.authenticate(input);
      await this.reclaim();
      return this.store.view(input.tokenId);
    });
  }

  /** Spends `amount` through the token now, never beyond the balance or any cap on its chain. */
  charge(input: ChargeRequest): Promise<Result<{ chargeId: number; sandboxId: string | null }>> {
    return capture(async () => {
      this.store.authenticate(input);
      const sandboxId = this.sandbox.check(input.sandboxId);
      await this.reclaimIfShort(input, input.amount);
      const chain = this.store.authenticate(input);
      if (this.store.headroom(chain).amount < input.amount) throw this.store.shortfall(chain, input.amount);
      let chargeId = 0;
      this.ctx.storage.transactionSync(() => {
        this.store.take(chain, input.amount, "spent");
        chargeId = this.store.record({
          at: Date.now(),
          token_id: input.tokenId,
          type: "charge",
          operation: input.operation,
          resource_id: input.resourceId,
          amount: input.amount,
          request_id: input.requestId,
          ref: null,
        });
      });
      return { chargeId, sandboxId };
    });
  }

  /**
   * Returns a charge whose call failed after it was taken. Idempotent. A caller that died before it
   * learned the charge's id names it by its resource, operation and request, and a time at or before it (or, for a
   * create's lost answer, by its resource and operation alone: the charge still standing).
   */
  async refund(input: RefundRequest): Promise<void> {
    this.ctx.storage.transactionSync(() => {
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

  /**
   * The operator gives back what one call (its request id) was charged to a token or its sub-tokens, with
   * every hold settled first so a data-plane call's charge is in the ledger. Idempotent: a charge given back
   * once is not again. Answers what this call gave back.
   */
  refundCall(input: {
    tokenId: string;
    callRequestId: string;
    requestId: string;
  }): Promise<Result<{ refunded: number; charges: number; view: BalanceView }>> {
    return capture(async () => {
      if (!this.store.token(input.tokenId))
        throw new AppError("not_found", `No credit token ${input.tokenId} in this account.`);
      await this.reclaim();
      const ids = this.store.descendantsOf(input.tokenId);
      let refunded = 0;
      let charges = 0;
      this.ctx.storage.transactionSync(() => {
        for (const charge of this.sql
          .exec<LedgerRow>("SELECT * FROM ledger WHERE type = 'charge' AND request_id = ?", input.callRequestId)
          .toArray()) {
          if (!ids.has(charge.token_id) || !this.giveBack(charge, input.requestId)) continue;
          refunded += charge.amount;
          charges++;
        }
      });
      return { refunded, charges, view: this.store.view(input.tokenId) };
    });
  }

  /** Settles the resource's finished holds, then reserves a new float for the token (a whole number of calls). */
  hold(input: HoldRequest): Promise<Result<HoldGrant>> {
    return capture(async () => {
      this.settleAll(input.settlements);
      this.store.authenticate(input);
      this.sandbox.check(input.sandboxId ?? null);
      await this.reclaimIfShort(input, input.price, input.resourceId);
      const chain = this.store.authenticate(input);
      const room = this.store.headroom(chain).amount;
      const amount = Math.floor(Math.min(input.want, room) / input.price) * input.price;
      if (amount < input.price) throw this.store.shortfall(chain, input.price);
      const now = Date.now();
      const grant = {
        holdId: crypto.randomUUID(),
        amount,
        expiresAt: Math.min(now + HOLD_LIFETIME_MS, ...chain.map((t) => t.expires_at)),
      };
      this.ctx.storage.transactionSync(() => {
        this.store.take(chain, amount, "held");
        this.sql.exec(
          "INSERT INTO holds VALUES (?, ?, ?, ?, ?, ?)",
          grant.holdId,
          input.tokenId,
          input.resourceId,
          amount,
          now,
          grant.expiresAt,
        );
      });
      await this.armSweep();
      return grant;
    });
  }

  /** Captures the charges of finished holds and releases the rest. Idempotent per hold. */
  async settle(input: { settlements: Settlement[] }): Promise<void> {
    this.settleAll(input.settlements);
  }

  mintSubtoken(input: Credential & { child: Omit<TokenRow, "spent" | "held" | "parent_id">; requestId: string }) {
    return capture(() => {
      const [parent] = this.store.authenticate(input);
      const c = input.child;
      const left = parent!.cap === null ? null : parent!.cap - parent!.spent - parent!.held;
      if (left !== null && c.cap !== null && c.cap > left) {
        throw new AppError("validation_failed", "cap_usd exceeds what the parent token has left of its own cap.", {
          errors: [{ path: "cap_usd", message: "exceeds the parent's remaining cap" }],
        });
      }
      this.sql.exec(
        "INSERT INTO tokens (token_id, parent_id, token_hash, label, cap, created_at, expires_at) VALUES " +
          "(?, ?, ?, ?, ?, ?, ?)",
        c.token_id,
        parent!.token_id,
        c.token_hash,
        c.label,
        c.cap,
        c.created_at,
        Math.min(c.expires_at, parent!.expires_at),
      );
      return this.store.view(c.token_id);
    });
  }

  /** Checks a credit token (for the OAuth token endpoint): its id, hash and lifetime. */
  authenticate(input: Credential): Promise<Result<{ tokenId: string }>> {
    return capture(() => ({ tokenId: this.store.authenticate(input)[0]!.token_id }));
  }

  /**
   * Ledger rows of the token and its descendants within [since, until), and its balance, with every hold settled first.
   */
  statement(
    input: Credential & { since: number; until: number },
  ): Promise<Result<{ rows: LedgerRow[]; view: BalanceView }>> {
    return capture(async () => {
      this.store.authenticate(input);
      await this.reclaim();
      const ids = this.store.descendantsOf(input.tokenId);
      const rows = this.sql
        .exec<LedgerRow>("SELECT * FROM ledger WHERE at >= ? AND at < ? ORDER BY seq", input.since, input.until)
        .toArray()
        .filter((row) => ids.has(row.token_id));
      return { rows, view: this.store.view(input.tokenId) };
    });
  }

  /** Releases holds whose resource never settled them (it was unreachable for an hour). */
  override async alarm(): Promise<void> {
    const now = Date.now();
    const stale = this.store.holds().filter((h) => h.expires_at <= now);
    this.settleAll(stale.map((h) => ({ holdId: h.hold_id, charges: "[]" })));
    await this.armSweep();
  }

  // ---- internals ----

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

  private settleAll(settlements: Settlement[]): void {
    for (const s of settlements) {
      this.ctx.storage.transactionSync(() => {
        const hold = this.store.hold(s.holdId);
        if (!hold) return; // settled already (a retry), or released by the sweep
        const token = this.store.token(hold.token_id);
        const chain = token ? this.store.chainOf(token) : [];
        const used = this.store.recordCharges(hold, s.charges);
        this.store.take(chain, -hold.amount, "held");
        this.store.take(chain, used, "spent");
        this.sql.exec("DELETE FROM holds WHERE hold_id = ?", hold.hold_id);
      });
    }
  }

  /** When the balance or a cap is short, money sitting in other resources' holds is brought back first. */
  private async reclaimIfShort(cred: Credential, amount: number, except?: string): Promise<void> {
    const chain = this.store.authenticate(cred);
    if (this.store.headroom(chain).amount >= amount) return;
    await this.reclaim(except);
  }

  /** Asks every resource holding money of this account to settle now. */
  private async reclaim(except?: string): Promise<void> {
    const resources = new Set(this.store.holds().map((h) => h.resource_id));
    if (except) resources.delete(except);
    await Promise.all([...resources].map(async (id) => unwrap(await resourceStub(this.env, id).flushBilling())));
  }

  private async armSweep(): Promise<void> {
    const next = this.sql.exec<{ at: number | null }>("SELECT min(expires_at) AS at FROM holds").one().at;
    if (next === null) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(next);
  }
}
