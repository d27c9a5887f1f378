/**
 * Synchronous reads and writes of an AccountObject's SQLite: tokens and their
 * chains, the balance, holds and the ledger. Every method runs inside one
 * Durable Object event, so a check and the write that follows it are atomic.
 */
import { AppError } from "../../src/http/errors";
import { digestsEqual } from "../../src/auth/ids";
import type { BalanceView, Credential, LedgerRow, TokenRow } from "../../src/rpc/account";

export type { BalanceView, Credential, LedgerRow, TokenRow };

export type HoldRow = {
  hold_id: string;
  token_id: string;
  resource_id: string;
  amount: number;
  created_at: number;
  expires_at: number;
};

export class AccountStore {
  constructor(private readonly sql: SqlStorage) {}

  balance(): number | null {
    return this.sql.exec<{ balance: number }>("SELECT balance FROM account").toArray()[0]?.balance ?? null;
  }

  token(tokenId: string): TokenRow | undefined {
    return this.sql.exec<TokenRow>("SELECT * FROM tokens WHERE token_id = ?", tokenId).toArray()[0];
  }

  /** The token and every ancestor up to the root; all must be alive for the token to work. */
  chainOf(token: TokenRow): TokenRow[] {
    const chain = [token];
    for (let t = token; t.parent_id;) {
      const parent = this.token(t.parent_id);
      if (!parent) break;
      chain.push(parent);
      t = parent;
    }
    return chain;
  }

  authenticate(cred: Credential, now = Date.now()): TokenRow[] {
    const token = this.token(cred.tokenId);
    const proven = cred.tokenHash === null || (token !== undefined && digestsEqual(token.token_hash, cred.tokenHash));
    if (!token || !proven) throw new AppError("unauthorized", "The credit token is not known.");
    const chain = this.chainOf(token);
    const dead = chain.find((t) => t.expires_at <= now);
    if (dead)
      throw new AppError("unauthorized", `The credit token ${dead === token ? "has" : "'s parent has"} expired.`);
    return chain;
  }

  /** How much the chain may take now: the balance, and every cap's headroom. */
  headroom(chain: TokenRow[]): { amount: number; limitedBy: "balance" | "cap" } {
    const balance = this.balance() ?? 0;
    const caps = chain.filter((t) => t.cap !== null).map((t) => t.cap! - t.spent - t.held);
    const cap = Math.min(Infinity, ...caps);
    return cap < balance ? { amount: Math.max(0, cap), limitedBy: "cap" } : { amount: balance, limitedBy: "balance" };
  }

  shortfall(chain: TokenRow[], amount: number, price = amount): AppError {
    const room = this.headroom(chain);
    return room.limitedBy === "cap"
      ? new AppError("cap_exceeded", `This call costs ${price} µUSD; the token's cap leaves ${room.amount} µUSD.`)
      : new AppError("insufficient_balance", `This call costs ${price} µUSD; the balance is ${room.amount} µUSD.`);
  }

  /** Moves `amount` from the balance to the chain's `spent` (captured) or `held` (reserved). */
  take(chain: TokenRow[], amount: number, column: "spent" | "held"): void {
    this.sql.exec("UPDATE account SET balance = balance - ?", amount);
    for (const t of chain)
      this.sql.exec(`UPDATE tokens SET ${column} = ${column} + ? WHERE token_id = ?`, amount, t.token_id);
  }

  record(row: Omit<LedgerRow, "seq">): number {
    return this.sql
      .exec<{ seq: number }>(
        "INSERT INTO ledger (at, token_id, type, operation, resource_id, amount, request_id, ref) VALUES " +
          "(?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq",
        row.at,
        row.token_id,
        row.type,
        row.operation,
        row.resource_id,
        row.amount,
        row.request_id,
        row.ref,
      )
      .one().seq;
  }

  /**
   * Writes a settlement's charges (Settlement.charges: a JSON array of [at, operation, amount, request_id])
   * as ledger rows, in their order, never more than the hold reserved: the charges up to the first that
   * would pass its amount. Answers the amount captured. Two statements whatever the count: a statement per
   * row held the account (and, locally, the one isolate every object shares) for tens of milliseconds.
   */
  recordCharges(hold: HoldRow, charges: string): number {
    const captured =
      `SELECT key, value FROM (SELECT key, value, sum(value ->> 2) OVER (ORDER BY key) AS running FROM ` +
      `json_each(?1)) WHERE running <= ?2`;
    this.sql.exec(
      `INSERT INTO ledger (at, token_id, type, operation, resource_id, amount, request_id, ref)
       SELECT value ->> 0, ?3, 'charge', value ->> 1, ?4, value ->> 2, value ->> 3, ?5 FROM (${captured}) ORDER BY key`,
      charges,
      hold.amount,
      hold.token_id,
      hold.resource_id,
      hold.hold_id,
    );
    return this.sql
      .exec<{ used: number }>(`SELECT coalesce(sum(value ->> 2), 0) AS used FROM (${captured})`, charges, hold.amount)
      .one().used;
  }

  hold(holdId: string): HoldRow | undefined {
    return this.sql.exec<HoldRow>("SELECT * FROM holds WHERE hold_id = ?", holdId).toArray()[0];
  }

  holds(): HoldRow[] {
    return this.sql.exec<HoldRow>("SELECT * FROM holds").toArray();
  }

  descendantsOf(tokenId: string): Set<string> {
    const rows = this.sql
      .exec<{ token_id: string; parent_id: string | null }>("SELECT token_id, parent_id FROM tokens")
      .toArray();
    const ids = new Set([tokenId]);
    for (let grew = true; grew;) {
      grew = false;
      for (const r of rows) {
        if (r.parent_id && ids.has(r.parent_id) && !ids.has(r.token_id)) {
          ids.add(r.token_id);
          grew = true;
        }
      }
    }
    return ids;
  }

  view(tokenId: string): BalanceView {
    const token = this.token(tokenId);
    if (!token) throw new AppError("unauthorized", "The credit token is not known.");
    const chain = this.chainOf(token);
    return {
      token_id: token.token_id,
      type: token.parent_id ? "subtoken" : "credit",
      balance: this.headroom(chain).amount,
      spent: token.spent,
      cap: token.cap,
      cap_remaining: token.cap === null ? null : token.cap - token.spent - token.held,
      expires_at: token.expires_at,
      parent_id: token.parent_id,
      label: token.label,
    };
  }
}
