/**
 * An account's holds (see AccountObject): money reserved for one resource's data-plane calls, counted against the
 * balance and every cap from the moment it is reserved, captured or released when the resource settles it, and
 * released by the alarm when it never does.
 */
import type { Env } from "../../src/env";
import { unwrap } from "../../src/http/errors";
import { resourceStub } from "../../src/stubs";
import type { Credential, HoldGrant, HoldRequest, Settlement, TokenRow } from "../../src/rpc/account";
import type { AccountStore } from "./store";

/** A hold nobody settled (its resource unreachable) is released after this. */
const HOLD_LIFETIME_MS = 60 * 60 * 1000;

export class AccountHolds {
  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly env: Env,
    private readonly store: AccountStore,
  ) {}

  private get sql(): SqlStorage {
    return this.storage.sql;
  }

  /** Reserves `amount` of the chain for the resource, until the hold's lifetime or the chain's first expiry. */
  reserve(input: HoldRequest, chain: TokenRow[], amount: number): HoldGrant {
    const now = Date.now();
    const grant = {
      holdId: crypto.randomUUID(),
      amount,
      expiresAt: Math.min(now + HOLD_LIFETIME_MS, ...chain.map((t) => t.expires_at)),
    };
    this.storage.transactionSync(() => {
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
    return grant;
  }

  /** Captures the charges of finished holds and releases the rest, each hold in its own transaction. */
  settleAll(settlements: Settlement[]): void {
    for (const s of settlements) {
      this.storage.transactionSync(() => {
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
  async reclaimIfShort(cred: Credential, amount: number, except?: string): Promise<void> {
    const chain = this.store.authenticate(cred);
    if (this.store.headroom(chain).amount >= amount) return;
    await this.reclaim(except);
  }

  /** Asks every resource holding money of this account to settle now. */
  async reclaim(except?: string): Promise<void> {
    const resources = new Set(this.store.holds().map((h) => h.resource_id));
    if (except) resources.delete(except);
    await Promise.all([...resources].map(async (id) => unwrap(await resourceStub(this.env, id).flushBilling())));
  }

  /** Sets the alarm for the first hold to expire (none: no alarm). */
  async armSweep(): Promise<void> {
    const next = this.sql.exec<{ at: number | null }>("SELECT min(expires_at) AS at FROM holds").one().at;
    if (next === null) await this.storage.deleteAlarm();
    else await this.storage.setAlarm(next);
  }
}
