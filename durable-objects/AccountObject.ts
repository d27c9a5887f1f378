/**
 * One per root credit token: the balance, the sub-token tree with caps and
 * lifetimes, and a ledger row for every movement. A Durable Object runs one
 * event at a time and SQLite calls are synchronous, so each method below is
 * atomic without locks: concurrent charges can never overspend.
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../src/env";
import { AppError, capture, type Result } from "../src/http/errors";
import { digestsEqual } from "../src/auth/ids";
import { ACCOUNT_SCHEMA } from "./account-schema";

export type TokenRow = {
  token_id: string;
  parent_id: string | null;
  token_hash: string;
  label: string | null;
  cap: number | null;
  spent: number;
  created_at: number;
  expires_at: number;
}

export interface Credential {
  tokenId: string;
  tokenHash: string;
}

export interface ChargeRequest extends Credential {
  amount: number;
  operation: string;
  resourceId: string | null;
  requestId: string;
}

export interface BalanceView {
  token_id: string;
  type: "credit" | "subtoken";
  balance: number;
  spent: number;
  cap: number | null;
  cap_remaining: number | null;
  expires_at: number;
  parent_id: string | null;
  label: string | null;
}

export type LedgerRow = {
  seq: number;
  at: number;
  token_id: string;
  type: "purchase" | "topup" | "charge" | "refund";
  operation: string;
  resource_id: string | null;
  amount: number;
  request_id: string;
  ref: string | null;
}

export class AccountObject extends DurableObject<Env> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    ctx.blockConcurrencyWhile(async () => {
      this.sql.exec(ACCOUNT_SCHEMA);
    });
  }

  /** Creates the account with its root token and first purchase. */
  open(input: { root: Omit<TokenRow, "spent" | "cap" | "parent_id">; amount: number; ref: string; requestId: string }) {
    return capture(() => {
      if (this.balanceMicro() !== null) throw new AppError("conflict", "This account already exists.");
      this.ctx.storage.transactionSync(() => {
        this.sql.exec("INSERT INTO account (id, balance) VALUES (1, ?)", input.amount);
        const r = input.root;
        this.sql.exec(
          "INSERT INTO tokens (token_id, parent_id, token_hash, label, cap, spent, created_at, expires_at) VALUES (?, NULL, ?, ?, NULL, 0, ?, ?)",
          r.token_id, r.token_hash, r.label, r.created_at, r.expires_at,
        );
        this.record(r.token_id, "purchase", "credits.purchase", null, input.amount, input.requestId, input.ref);
      });
      return this.view(input.root.token_id);
    });
  }

  /** Undoes `open` when the payment behind it could not be settled. Nothing was returned to the client. */
  async void(): Promise<void> {
    this.ctx.storage.transactionSync(() => {
      this.sql.exec("DELETE FROM ledger");
      this.sql.exec("DELETE FROM tokens");
      this.sql.exec("DELETE FROM account");
    });
  }

  /** Adds funds; the root token's lifetime is renewed to at least `expiresAt`. */
  topUp(input: Credential & { amount: number; ref: string; requestId: string; expiresAt: number }) {
    return capture(() => {
      const token = this.authenticate(input);
      this.ctx.storage.transactionSync(() => {
        this.sql.exec("UPDATE account SET balance = balance + ?", input.amount);
        this.sql.exec("UPDATE tokens SET expires_at = max(expires_at, ?) WHERE parent_id IS NULL", input.expiresAt);
        this.record(token.token_id, "topup", "credits.topup", null, input.amount, input.requestId, input.ref);
      });
      return this.view(token.token_id);
    });
  }

  /** Undoes a top-up whose payment failed to settle. */
  async revertTopUp(input: { ref: string }): Promise<void> {
    this.ctx.storage.transactionSync(() => {
      const row = this.sql.exec<{ seq: number; amount: number }>("SELECT seq, amount FROM ledger WHERE type = 'topup' AND ref = ?", input.ref).toArray()[0];
      if (!row) return;
      this.sql.exec("UPDATE account SET balance = balance - ?", row.amount);
      this.sql.exec("DELETE FROM ledger WHERE seq = ?", row.seq);
    });
  }

  balance(input: Credential): Promise<Result<BalanceView>> {
    return capture(() => this.view(this.authenticate(input).token_id));
  }

  /** Spends `amount` through the token, never beyond the balance or any cap on its chain. */
  charge(input: ChargeRequest): Promise<Result<{ chargeId: number; balance: number }>> {
    return capture(() => {
      const chain = this.chainOf(this.authenticate(input));
      const balance = this.balanceMicro() ?? 0;
      if (balance < input.amount) {
        throw new AppError("insufficient_balance", `This call costs ${input.amount} µUSD; the balance is ${balance} µUSD.`);
      }
      for (const t of chain) {
        if (t.cap !== null && t.spent + input.amount > t.cap) {
          throw new AppError("cap_exceeded", `Token ${t.token_id} has ${t.cap - t.spent} µUSD left of its cap.`);
        }
      }
      let chargeId = 0;
      this.ctx.storage.transactionSync(() => {
        this.sql.exec("UPDATE account SET balance = balance - ?", input.amount);
        for (const t of chain) this.sql.exec("UPDATE tokens SET spent = spent + ? WHERE token_id = ?", input.amount, t.token_id);
        chargeId = this.record(input.tokenId, "charge", input.operation, input.resourceId, input.amount, input.requestId, null);
      });
      return { chargeId, balance: balance - input.amount };
    });
  }

  /** Returns a charge whose call failed after it was taken. Idempotent. */
  async refund(input: { chargeId: number; requestId: string }): Promise<void> {
    this.ctx.storage.transactionSync(() => {
      const charge = this.sql.exec<LedgerRow>("SELECT * FROM ledger WHERE seq = ? AND type = 'charge'", input.chargeId).toArray()[0];
      if (!charge) return;
      const done = this.sql.exec("SELECT 1 FROM ledger WHERE type = 'refund' AND ref = ?", String(input.chargeId)).toArray();
      if (done.length) return;
      const token = this.token(charge.token_id);
      if (!token) return;
      this.sql.exec("UPDATE account SET balance = balance + ?", charge.amount);
      for (const t of this.chainOf(token)) this.sql.exec("UPDATE tokens SET spent = spent - ? WHERE token_id = ?", charge.amount, t.token_id);
      this.record(charge.token_id, "refund", charge.operation, charge.resource_id, charge.amount, input.requestId, String(input.chargeId));
    });
  }

  mintSubtoken(input: Credential & { child: Omit<TokenRow, "spent" | "parent_id">; requestId: string }) {
    return capture(() => {
      const parent = this.authenticate(input);
      const c = input.child;
      if (parent.cap !== null && c.cap !== null && c.cap > parent.cap - parent.spent) {
        throw new AppError("validation_failed", `cap_usd exceeds what the parent token has left of its own cap.`, {
          errors: [{ path: "cap_usd", message: "exceeds the parent's remaining cap" }],
        });
      }
      const expiresAt = Math.min(c.expires_at, parent.expires_at);
      this.sql.exec(
        "INSERT INTO tokens (token_id, parent_id, token_hash, label, cap, spent, created_at, expires_at) VALUES (?, ?, ?, ?, ?, 0, ?, ?)",
        c.token_id, parent.token_id, c.token_hash, c.label, c.cap, c.created_at, expiresAt,
      );
      return this.view(c.token_id);
    });
  }

  /** Ledger rows of the token and its descendants within [since, until). */
  ledger(input: Credential & { since: number; until: number }): Promise<Result<LedgerRow[]>> {
    return capture(() => {
      const token = this.authenticate(input);
      const ids = this.descendantsOf(token.token_id);
      return this.sql
        .exec<LedgerRow>("SELECT * FROM ledger WHERE at >= ? AND at < ? ORDER BY seq", input.since, input.until)
        .toArray()
        .filter((row) => ids.has(row.token_id));
    });
  }

  // ---- internals ----

  private record(tokenId: string, type: LedgerRow["type"], operation: string, resourceId: string | null, amount: number, requestId: string, ref: string | null): number {
    const row = this.sql
      .exec<{ seq: number }>(
        "INSERT INTO ledger (at, token_id, type, operation, resource_id, amount, request_id, ref) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq",
        Date.now(), tokenId, type, operation, resourceId, amount, requestId, ref,
      )
      .one();
    return row.seq;
  }

  private balanceMicro(): number | null {
    return this.sql.exec<{ balance: number }>("SELECT balance FROM account").toArray()[0]?.balance ?? null;
  }

  private token(tokenId: string): TokenRow | undefined {
    return this.sql.exec<TokenRow>("SELECT * FROM tokens WHERE token_id = ?", tokenId).toArray()[0];
  }

  /** The token and every ancestor up to the root; all must be alive for the token to work. */
  private chainOf(token: TokenRow): TokenRow[] {
    const chain = [token];
    for (let t = token; t.parent_id; ) {
      const parent = this.token(t.parent_id);
      if (!parent) break;
      chain.push(parent);
      t = parent;
    }
    return chain;
  }

  private descendantsOf(tokenId: string): Set<string> {
    const rows = this.sql.exec<{ token_id: string; parent_id: string | null }>("SELECT token_id, parent_id FROM tokens").toArray();
    const ids = new Set([tokenId]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const r of rows) if (r.parent_id && ids.has(r.parent_id) && !ids.has(r.token_id)) ids.add(r.token_id), (grew = true);
    }
    return ids;
  }

  private authenticate(cred: Credential): TokenRow {
    const token = this.token(cred.tokenId);
    if (!token || !digestsEqual(token.token_hash, cred.tokenHash)) {
      throw new AppError("unauthorized", "The credit token is not known.");
    }
    const now = Date.now();
    const dead = this.chainOf(token).find((t) => t.expires_at <= now);
    if (dead) throw new AppError("unauthorized", `The credit token ${dead === token ? "has" : "'s parent has"} expired.`);
    return token;
  }

  private view(tokenId: string): BalanceView {
    const token = this.token(tokenId);
    if (!token) throw new AppError("unauthorized", "The credit token is not known.");
    const chain = this.chainOf(token);
    const headroom = chain.map((t) => (t.cap === null ? Infinity : t.cap - t.spent));
    const balance = Math.max(0, Math.min(this.balanceMicro() ?? 0, ...headroom));
    return {
      token_id: token.token_id,
      type: token.parent_id ? "subtoken" : "credit",
      balance,
      spent: token.spent,
      cap: token.cap,
      cap_remaining: token.cap === null ? null : token.cap - token.spent,
      expires_at: token.expires_at,
      parent_id: token.parent_id,
      label: token.label,
    };
  }
}
