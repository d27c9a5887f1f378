/**
 * The resource's side of holds (see AccountObject): a float of prepaid money
 * per paying credit token, spent locally. Each charge is written in the same
 * SQLite transaction as the operation it pays for, so work and payment commit
 * or roll back together; finished holds are settled with their account in one
 * call. A hold is taken when none covers a call, and settled when it runs out,
 * a few seconds after it was taken, when the account asks, or when the
 * resource ends. Open holds are mirrored in memory: the hot path is one INSERT.
 *
 * A call should never wait for the account while the balance can pay: holds are
 * sized to about a second of the token's observed call rate here, and at least
 * the calls waiting for one (within the cap), and the next one is asked for in
 * the background once the current one is half used, so under steady load it is
 * there before the current one runs out.
 */
import type { Env } from "../../src/env";
import { AppError, unwrap } from "../../src/http/errors";
import { digestsEqual } from "../../src/auth/ids";
import type { CreditCredential } from "../../src/auth/credentials";
import { accountStub } from "../../src/stubs";
import { CallRate } from "./call-rate";
import { dryRun, GroupCommit } from "./transactions";
import type { Hold } from "./billing-tables";
import { OpenHolds } from "./open-holds";

/**
 * A hold covers at least this many calls at the price asked for, and about a second of the observed rate beyond that...
 */
const HOLD_MIN_CALLS = 100;
/** ...but reserves at most this much (µUSD) beyond one call. */
export const HOLD_MAX_MICRO = 500_000;
/** The span of calls a hold is sized to cover, at the rate last observed. */
const HOLD_SPAN_MS = 1_000;
/** Once a hold has less than this share left, the next is asked for in the background. */
const REFILL_AT = 0.5;
/** An unfinished hold is settled this long after it was taken, so balances and ledgers catch up quickly. */
const FLUSH_AFTER_MS = 5_000;
/** How many times a call waits for a hold before giving up (each wait is one account round trip). */
const HOLD_ATTEMPTS = 4;
/**
 * Call rates kept per resource (per token and price); the oldest go first, and a token forgotten starts from the
 * minimum hold again.
 */
const MAX_RATES = 1_000;
/** When an account cannot be reached, settlement is retried this much later. */
const RETRY_AFTER_MS = 30_000;

/** What holds in flight, call rates and waiting calls are kept under: one token at one price. */
const keyOf = (payer: CreditCredential, price: number) => `${payer.tokenId}:${price}`;

export class Billing {
  /** One hold request in flight per token and price; concurrent calls wait for it instead of asking again. */
  private readonly inflight = new Map<string, { hash: string; done: Promise<void> }>();
  /** The holds granted here, in their tables and mirrored in memory (open-holds.ts). */
  private readonly held: OpenHolds;
  private readonly rates = new Map<string, CallRate>();
  /**
   * Calls waiting for a hold, per token and price: a hold asked for covers them all (a cold burst is served by one
   * round trip).
   */
  private readonly waiting = new Map<string, number>();
  private commits: GroupCommit | undefined;

  constructor(
    sql: SqlStorage,
    private readonly env: Env,
    private readonly resourceId: string,
    /** Called inside the transaction that forgets settled holds, with what they captured. */
    onSettled: (captured: number) => void,
    /** The resource's clock, which schedules settlements (a hold's own expiry is the account's, in real time). */
    private readonly clock: () => number,
    /** The resource's sandbox (null: none): the account refuses a hold of money from the other side. */
    private readonly sandboxId: () => string | null,
  ) {
    this.held = new OpenHolds(sql, onSettled);
  }

  /** An open hold of this token that covers `price`, or null. A wrong secret for a known token is refused here. */
  private usable(payer: CreditCredential, price: number, now: number): Hold | null {
    let best: Hold | null = null;
    for (const hold of this.held.all().values()) {
      if (hold.token_id !== payer.tokenId || hold.closed || hold.expires_at <= now) continue;
      // An access token was verified by the worker; a secret must match the one the account checked (a hold
      // taken through an access token has no hash to compare, so a secret must go through the account).
      if (payer.tokenHash !== null) {
        if (!hold.token_hash) continue;
        if (!digestsEqual(hold.token_hash, payer.tokenHash))
          throw new AppError("unauthorized", "The credit token is not known.");
      }
      if (hold.amount - hold.used >= price && (!best || hold.amount - hold.used > best.amount - best.used)) best = hold;
    }
    return best;
  }

  /**
   * Makes sure a hold covers `price` before slow work that would be wasted if the call then could not
   * be paid (an operation's prepare step: a fetch, an upload, a multipart complete). Refuses (402) now.
   */
  async reserve(payer: CreditCredential, price: number): Promise<void> {
    if (!this.usable(payer, price, Date.now())) await this.acquire(payer, price);
  }

  /**
   * Runs `work` paid by `payer`: against a hold, with the charge written in the same transaction, so
   * work and charge commit or roll back together (with the other paid calls of the moment: see
   * GroupCommit). Without a hold for this token, the work is first dry-run (a call the engine would
   * refuse must not take one), then a hold is taken; `onWait` runs after each wait for one.
   */
  async spend<T>(
    storage: DurableObjectStorage,
    payer: CreditCredential,
    price: number,
    charge: { operation: string; requestId: string },
    work: () => T,
    onWait: () => Promise<void>,
  ): Promise<T> {
    this.commits ??= new GroupCommit(storage);
    const key = keyOf(payer, price);
    for (let attempt = 0; attempt < HOLD_ATTEMPTS; attempt++) {
      // Which hold pays is decided when the batch runs: one may have been used up or settled since the call came in.
      const paid = await this.commits.run(() => {
        const hold = this.usable(payer, price, Date.now());
        if (!hold) {
          // Counted inside the batch, so the first of its calls to ask the account asks for all of them.
          this.waiting.set(key, (this.waiting.get(key) ?? 0) + 1);
          return null;
        }
        const value = work();
        this.held.charge(hold, price, charge);
        return { value, hold };
      });
      if (paid) {
        this.refillAhead(payer, price, paid.hold);
        return paid.value;
      }
      try {
        dryRun(storage, work);
        await this.acquire(payer, price);
      } finally {
        const left = this.waiting.get(key)! - 1;
        if (left > 0) this.waiting.set(key, left);
        else this.waiting.delete(key);
      }
      await onWait();
    }
    throw new AppError("conflict", "Too many concurrent payments with this credit token; retry the call.");
  }

  /** Charged through holds but not settled yet. */
  unsettled(): number {
    return this.held.unsettled();
  }

  /** Makes sure a hold for this token covers `price`, asking the account once however many calls are waiting. */
  private async acquire(payer: CreditCredential, price: number, ahead = false): Promise<void> {
    const key = keyOf(payer, price);
    const running = this.inflight.get(key);
    if (running) {
      // The same token shares the outcome (a 402 applies to all); another secret must not see it, and asks again.
      if (digestsEqual(running.hash, payer.tokenHash ?? "")) return running.done;
      return running.done.catch(() => undefined);
    }
    const done = this.requestHold(payer, price, ahead).finally(() => this.inflight.delete(key));
    this.inflight.set(key, { hash: payer.tokenHash ?? "", done });
    return done;
  }

  /**
   * Counts the call, and once `hold` is half used asks for the next in the background, so the calls
   * after it find one waiting. A refusal there (the account ran short) is left for the call that
   * finds no hold: it asks again and gets what is left, or the 402.
   */
  private refillAhead(payer: CreditCredential, price: number, hold: Hold): void {
    const key = keyOf(payer, price);
    let rate = this.rates.get(key);
    if (!rate) {
      // Kept for the tokens that paid here last: one resource paid by very many tokens must not grow without bound.
      if (this.rates.size >= MAX_RATES) this.rates.delete(this.rates.keys().next().value!);
      this.rates.set(key, (rate = new CallRate()));
    }
    rate.count(Date.now());
    if (hold.amount - hold.used >= hold.amount * REFILL_AT || this.inflight.has(key)) return;
    this.acquire(payer, price, true).catch(() => undefined);
  }

  /**
   * What to ask the account for: about HOLD_SPAN_MS of this token's calls at the rate observed, and at least the calls
   * waiting, within the cap.
   */
  private holdSize(payer: CreditCredential, price: number): number {
    const key = keyOf(payer, price);
    const rate = this.rates.get(key)?.perSecond(Date.now()) ?? 0;
    const calls = Math.max(HOLD_MIN_CALLS, Math.ceil((rate * HOLD_SPAN_MS) / 1000), this.waiting.get(key) ?? 0);
    return Math.max(price, Math.min(price * calls, HOLD_MAX_MICRO));
  }

  /** Settles holds with their accounts: the due ones, or all of them (after any hold still being granted). */
  async flush(which: "due" | "all", now = this.clock()): Promise<void> {
    if (which === "all") await Promise.all([...this.inflight.values()].map((r) => r.done.catch(() => undefined)));
    const batches = this.held.close(which === "all" ? () => true : (h) => h.flush_at <= now);
    await Promise.all(
      batches.map(async (batch) => {
        try {
          await accountStub(this.env, batch.accountId).settle({ settlements: batch.settlements });
          this.held.forget(batch.settlements);
        } catch (err) {
          this.held.retryAt(batch.settlements, now + RETRY_AFTER_MS);
          if (which === "all") throw err;
          console.error(`settlement of holds of ${this.resourceId} failed; retrying later`, err);
        }
      }),
    );
  }

  /** When the next settlement is due, for the resource's alarm. */
  nextFlushAt(): number | null {
    return this.held.nextFlushAt();
  }

  /**
   * Takes a new hold. When none covers the call, this token's holds here are spent or too small for
   * this price: they are settled in the same round trip. Asked `ahead`, the current one keeps serving
   * meanwhile, and only those with less than a call left are settled.
   */
  private async requestHold(payer: CreditCredential, price: number, ahead: boolean): Promise<void> {
    const settlements = this.held
      .close((h) => h.token_id === payer.tokenId && (!ahead || h.amount - h.used < price))
      .flatMap((b) => b.settlements);
    const want = this.holdSize(payer, price);
    const result = await accountStub(this.env, payer.accountId).hold({
      ...payer,
      resourceId: this.resourceId,
      price,
      want,
      settlements,
      sandboxId: this.sandboxId(),
    });
    this.held.forget(settlements); // the account applied them before anything else, whatever the answer
    const grant = unwrap(result);
    const hold: Hold = {
      hold_id: grant.holdId,
      account_id: payer.accountId,
      token_id: payer.tokenId,
      token_hash: payer.tokenHash ?? "",
      amount: grant.amount,
      closed: 0,
      flush_at: this.clock() + FLUSH_AFTER_MS,
      expires_at: grant.expiresAt,
      used: 0,
    };
    this.held.add(hold);
  }
}
