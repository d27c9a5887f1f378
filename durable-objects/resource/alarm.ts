/**
 * The resource's one alarm, a part of ResourceObject: when it must next run (the earliest of every part's due times:
 * the resource's life, a settlement, the outbox, the kind's timer), and what a run does, in order: give back what a
 * dead process left charged, end an expired resource (or resume an end that failed part-way), settle due holds,
 * finish the outbox, send the expiry notices, fire the kind's timer. Also the test clock's step, which runs what fell
 * due as the alarm would.
 */
import { AppError } from "../../src/http/errors";
import type { Env } from "../../src/env";
import { nextTimerAt } from "./engine-store";
import type { MetaCell } from "./meta-cell";
import type { ResourceClock } from "./clock";
import type { ResourceOutbox } from "./outbox";
import type { ResourceWork } from "./work";
import type { ResourceLifecycle } from "./lifecycle";
import type { ResourceInSandbox } from "./in-sandbox";
import type { Billing } from "./billing";
import { advanceClockOffset } from "./test-clock";

export class ResourceAlarm {
  /** The run under way (or the last one): runs are chained, one at a time. */
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly env: Env,
    private readonly meta: MetaCell,
    private readonly clock: ResourceClock,
    private readonly outbox: ResourceOutbox,
    private readonly work: ResourceWork,
    private readonly lifecycle: ResourceLifecycle,
    private readonly billing: () => Billing,
    private readonly sandbox: ResourceInSandbox,
  ) {}

  /** When the alarm must next run, on the resource's clock (null: nothing is due). */
  nextAt(): number | null {
    const meta = this.meta.get();
    const next = [this.lifecycle.nextDueAt()];
    if (meta) {
      const now = this.clock.now();
      next.push(
        this.billing().nextFlushAt(),
        this.outbox.nextDueAt(),
        nextTimerAt(meta, this.meta.config(meta), this.storage.sql, this.env, now),
      );
    }
    const at = Math.min(...next.map((t) => t ?? Infinity));
    return at === Infinity ? null : at;
  }

  async arm(): Promise<void> {
    const at = this.nextAt();
    if (at !== null) await this.clock.alarmAt(at);
  }

  /**
   * TTL expiry and due settlements. The runtime retries the alarm if this throws, so neither is skipped.
   * Runs one at a time: a run awaits I/O (a timer's prepare step, a settlement), and another entry into
   * the alarm meanwhile (the test clock's, or the runtime's while that one runs) would start the same due
   * work twice.
   */
  run(): Promise<void> {
    const run = this.running.then(() => this.sandbox.alarmInSandbox(() => this.runOnce()));
    this.running = run.catch(() => undefined);
    return run;
  }

  private async runOnce(): Promise<void> {
    this.clock.alarmCleared();
    if (await this.lifecycle.recoverCharges()) return;
    try {
      const meta = this.meta.get();
      if (!meta) return await this.arm(); // a creation still running here keeps its backstop
      if (meta.ended || this.clock.now() >= meta.expires_at) {
        await this.lifecycle.end(meta, meta.ended ?? "expired"); // an end that failed part-way resumes here
        return;
      }
      await this.billing().flush("due");
      await this.work.finishOutbox(meta);
      // Read again: an extend may have moved expires_at while settlement waited.
      await this.lifecycle.sendDueNotices(this.meta.get()!);
      await this.work.fireDueTimer();
      await this.arm();
    } catch (err) {
      // A cancel that landed while this run awaited: the run recorded nothing (MetaCell.stillHere) and the end is the
      // cancel's to finish, so that is no failure to report.
      const endedMeanwhile = err instanceof AppError && err.options.resourceMissing === true;
      if (!endedMeanwhile) console.error("resource alarm failed; trying again in a minute", err);
      // The platform gives up on an alarm after a few failed runs; expiry must not be lost, so re-arm.
      if (this.meta.get()) await this.clock.alarmAt(this.clock.now() + 60_000);
    }
  }

  /**
   * Test only (ENVIRONMENT=test): moves the resource's clock `ms` ahead and answers its now. What is due by then runs
   * here, as the alarm would run it (`runDue` false leaves it to the alarm, armed for now); the alarm is never left in
   * the past for the runtime to race.
   */
  async advanceClock(ms: number, runDue: boolean): Promise<number> {
    this.clock.offset = advanceClockOffset(this.env, this.storage.sql, ms);
    for (let run = 0; runDue && run < 50 && (this.nextAt() ?? Infinity) <= this.clock.now(); run++) await this.run();
    await this.arm();
    return this.clock.now();
  }
}
