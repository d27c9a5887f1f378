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
 *
 * This class is the RPC surface; in account/: the tables (schema.ts) and their reads and writes (store.ts),
 * purchases and top-ups (purchases.ts), holds (holds.ts), refunds (refunds.ts), sandbox money (sandbox-money.ts).
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../src/env";
import { AppError, capture, type Result } from "../src/http/errors";
import { ACCOUNT_SCHEMA } from "./account/schema";
import { AccountStore } from "./account/store";
import { SandboxMoney } from "./account/sandbox-money";
import { AccountHolds } from "./account/holds";
import { Purchases, type OpenInput, type TopUpInput } from "./account/purchases";
import { Refunds } from "./account/refunds";
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

export class AccountObject extends DurableObject<Env> implements AccountApi {
  private readonly store: AccountStore;
  private readonly sql: SqlStorage;
  private readonly sandbox: SandboxMoney;
  private readonly holds: AccountHolds;
  private readonly purchases: Purchases;
  private readonly refunds: Refunds;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.store = new AccountStore(this.sql);
    this.sandbox = new SandboxMoney(this.sql);
    this.holds = new AccountHolds(ctx.storage, env, this.store);
    this.purchases = new Purchases(ctx.storage, this.store, this.sandbox);
    this.refunds = new Refunds(ctx.storage, this.store);
    // Not awaited (a constructor cannot be): the runtime holds every call until it has run.
    void ctx.blockConcurrencyWhile(async () => {
      this.sql.exec(ACCOUNT_SCHEMA);
    });
  }

  /** Creates the account with its root token and first purchase. */
  open(input: OpenInput) {
    return capture(() => {
      if (this.store.balance() !== null) throw new AppError("conflict", "This account already exists.");
      this.purchases.open(input);
      return this.store.view(input.root.token_id);
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
  topUp(input: TopUpInput) {
    return capture(() => {
      const [token] = this.store.authenticate(input);
      this.sandbox.refuseTopUp();
      this.purchases.topUp(input, token!.token_id);
      return this.store.view(token!.token_id);
    });
  }

  /** Undoes a top-up whose payment failed to settle. */
  async revertTopUp(input: { ref: string }): Promise<void> {
    this.purchases.revertTopUp(input.ref);
  }

  /** The token's balance, after every open hold is settled so the figures are exact. */
  balance(input: Credential): Promise<Result<BalanceView>> {
    return capture(async () => {
      this.store.authenticate(input);
      await this.holds.reclaim();
      return this.store.view(input.tokenId);
    });
  }

  /** Spends `amount` through the token now, never beyond the balance or any cap on its chain. */
  charge(input: ChargeRequest): Promise<Result<{ chargeId: number; sandboxId: string | null }>> {
    return capture(async () => {
      this.store.authenticate(input);
      const sandboxId = this.sandbox.check(input.sandboxId);
      await this.holds.reclaimIfShort(input, input.amount);
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
    this.refunds.refund(input);
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
      await this.holds.reclaim();
      const ids = this.store.descendantsOf(input.tokenId);
      const { refunded, charges } = this.refunds.refundCall(ids, input.callRequestId, input.requestId);
      return { refunded, charges, view: this.store.view(input.tokenId) };
    });
  }

  /** Settles the resource's finished holds, then reserves a new float for the token (a whole number of calls). */
  hold(input: HoldRequest): Promise<Result<HoldGrant>> {
    return capture(async () => {
      this.holds.settleAll(input.settlements);
      this.store.authenticate(input);
      this.sandbox.check(input.sandboxId ?? null);
      await this.holds.reclaimIfShort(input, input.price, input.resourceId);
      const chain = this.store.authenticate(input);
      const room = this.store.headroom(chain).amount;
      const amount = Math.floor(Math.min(input.want, room) / input.price) * input.price;
      if (amount < input.price) throw this.store.shortfall(chain, input.price);
      const grant = this.holds.reserve(input, chain, amount);
      await this.holds.armSweep();
      return grant;
    });
  }

  /** Captures the charges of finished holds and releases the rest. Idempotent per hold. */
  async settle(input: { settlements: Settlement[] }): Promise<void> {
    this.holds.settleAll(input.settlements);
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
      await this.holds.reclaim();
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
    this.holds.settleAll(stale.map((h) => ({ holdId: h.hold_id, charges: "[]" })));
    await this.holds.armSweep();
  }
}
