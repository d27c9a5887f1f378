/**
 * The direct charges of a resource's creates and extends (direct-charges.ts), as this object's process sees them:
 * which run here now (not a dead process's to recover), the backstop each keeps in the alarm, and giving back what a
 * dead process left written down. A part of the resource's lifecycle (lifecycle.ts), which makes it.
 */
import type { Env } from "../../src/env";
import {
  awaitsSettlement,
  crossOff,
  type DirectCharge,
  giveBack,
  isCreation,
  pendingCharges,
  PENDING_RECOVERY_MS,
  settledInD1,
  settlementsDueAt,
  type PendingCharge,
} from "./direct-charges";
import type { ResourceClock } from "./clock";

export class ChargesInFlight {
  /**
   * Direct charges running in this process (request id → when the alarm would give them back): not a dead
   * process's to recover.
   */
  private readonly charging = new Map<string, number>();

  constructor(
    private readonly sql: SqlStorage,
    private readonly env: Env,
    private readonly clock: ResourceClock,
  ) {}

  /**
   * When the alarm must next run for them: a running charge's backstop, should the process die, or an x402 create
   * awaiting the worker's settlement (past the backstop's wait, D1's payment row decides it).
   */
  nextDueAt(): number | null {
    const settling = settlementsDueAt(this.sql);
    const next = Math.min(...this.charging.values(), settling === null ? Infinity : settling + PENDING_RECOVERY_MS);
    return next === Infinity ? null : next;
  }

  /** Writes a direct charge down before it is taken, with the alarm within reach should this process die. */
  async begin(charge: DirectCharge): Promise<void> {
    charge.record();
    const recoverAt = this.clock.now() + PENDING_RECOVERY_MS;
    this.charging.set(charge.pending.request_id, recoverAt);
    await this.clock.alarmBy(recoverAt);
  }

  /** The charge's call is over here (crossed off, or left written down for the alarm). */
  finished(requestId: string): void {
    this.charging.delete(requestId);
  }

  /**
   * Before an end deletes the pending charges with everything else: an extend under way here is let finish
   * (it sees the end and gives its charge back), and one a dead process left written down is given back now,
   * not lost with the row that recorded it. A failure throws: the end is resumed by the alarm, which gives
   * them back first.
   */
  async settleBeforeEnd(): Promise<void> {
    for (const waitUntil = Date.now() + 30_000; this.charging.size;) {
      if (Date.now() > waitUntil)
        throw new Error("an extend's charge is still under way; the end resumes with the alarm");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    for (const pending of pendingCharges(this.sql)) {
      await giveBack(this.env, pending);
      crossOff(this.sql, pending.request_id);
    }
  }

  /** The pending charges no call in this process is taking: a dead process left them written down. */
  leftBehind(): PendingCharge[] {
    return pendingCharges(this.sql).filter((p) => !this.charging.has(p.request_id));
  }

  /**
   * Pending charges a dead process left behind: each given back, and a creation undone (by `undoCreation`). True
   * when the alarm must stop here: the resource is gone, or a refund failed (the alarm then runs again in a minute).
   */
  async recover(undoCreation: (creation: PendingCharge) => Promise<void>): Promise<boolean> {
    try {
      for (const pending of this.leftBehind()) {
        if (awaitsSettlement(pending)) {
          // The worker settles after the create answers; past the backstop's wait, D1's payment row says how it went.
          // on the resource's clock, which a test moves
          if (this.clock.now() < pending.started_at + PENDING_RECOVERY_MS) continue;
          if (await settledInD1(this.env.DB, pending.request_id)) {
            crossOff(this.sql, pending.request_id);
            continue;
          }
        }
        if (isCreation(pending)) {
          await undoCreation(pending);
          return true;
        }
        await giveBack(this.env, pending);
        crossOff(this.sql, pending.request_id);
      }
      return false;
    } catch (err) {
      console.error("a pending charge was not given back yet; trying again in a minute", err);
      await this.clock.alarmAt(this.clock.now() + 60_000);
      return true;
    }
  }
}
