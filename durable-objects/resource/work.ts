/**
 * How a kind's code runs inside its resource: the store and context it sees, an optional
 * asynchronous step before a transaction, the transaction, and what committed work obliges
 * afterwards (its sends and R2 deletes carried out, the alarm moved, long-polls woken).
 */
import type { Env } from "../../src/env";
import { AppError } from "../../src/http/errors";
import type { Json } from "../../src/json";
import { requireKind } from "../../src/resources/kinds";
import type { EngineStore, PrepareContext } from "../../src/kind/kind";
import type { DeliveryReport } from "../../src/rpc/resource";
import type { ResourceFaults } from "../../src/rpc/resource-faults";
import { dieAt, pauseAfterPrepare } from "./test-faults";
import { afterCommit, dueTimer, engineStore, prepareContext, type AfterCommit } from "./engine-store";
import { recordOf, type MetaRow, type RecordCore, type ResourceState } from "./meta";
import type { MetaCell } from "./meta-cell";
import type { ResourceClock } from "./clock";
import type { ResourceOutbox } from "./outbox";
import type { Billing } from "./billing";

/**
 * Long-polls that wait on one resource at once. The runtime allows an object 10,000 active timers, shared
 * by everything it does (group commit, fetch timeouts, long-polls); beyond this a long-poll answers at once.
 */
export const MAX_WAITERS = 1_000;

export class ResourceWork {
  /** Long-polls waiting for a change: woken after any committed work here, each re-checks its condition. */
  private readonly waiters = new Set<() => void>();

  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly env: Env,
    private readonly meta: MetaCell,
    private readonly clock: ResourceClock,
    private readonly outbox: ResourceOutbox,
    private readonly billing: () => Billing,
    /** Test-only faults (resource/test-faults.ts): a pause between a prepare step and its transaction. */
    private readonly faults: ResourceFaults,
    /** Sets the alarm for what is next due (the object's, which knows every part's due times). */
    private readonly armAlarm: () => Promise<void>,
  ) {}

  /**
   * The store a kind's code writes through. One made for a commit (`pending`, in the commit's transaction) keeps the
   * bytes its call put beforehand: their intents are crossed off with the commit (r2-intents.ts).
   */
  store(meta: MetaRow, now = this.clock.now(), pending?: AfterCommit): EngineStore {
    if (pending) this.outbox.intents.keep();
    return engineStore(meta, this.storage.sql, this.env, now, pending && this.outbox.recorder(pending));
  }

  /** What a kind's asynchronous step sees: its R2 puts write their intents first. */
  prepareContext(meta: MetaRow): PrepareContext {
    const env = { ...this.env, BUCKET: this.outbox.intents.bucket(this.env.BUCKET) };
    return prepareContext(meta, this.storage.sql, env, this.clock.now(), () => void this.meta.stillHere());
  }

  record(meta: MetaRow, state: ResourceState): RecordCore {
    return recordOf(meta, this.meta.config(meta), state, this.store(meta), this.billing().unsettled());
  }

  /**
   * Runs a kind's optional asynchronous step, then `work` with its result; when `work` fails
   * (refused, unpaid, the resource ended meanwhile), `discard` undoes what the step left behind.
   */
  async prepared<P, T>(
    meta: MetaRow,
    prepare: ((ctx: PrepareContext) => Promise<P>) | undefined,
    discard: ((ctx: PrepareContext, p: P) => Promise<void>) | undefined,
    work: (prepared: P | undefined) => Promise<T>,
  ): Promise<T> {
    if (!prepare) return work(undefined);
    return this.outbox.intents.scope(async () => {
      const ctx = this.prepareContext(meta);
      const value = await prepare(ctx);
      dieAt(this.faults, "after-prepare");
      await pauseAfterPrepare(this.faults);
      try {
        this.meta.stillHere();
        return await work(value);
      } catch (err) {
        await discard?.(ctx, value).catch((e) => console.error(`${meta.kind}: discarding prepared work failed`, e));
        throw err;
      }
    });
  }

  /**
   * Waits until `ready` holds or `seconds` pass (docs/api.md#requests-and-conventions caps long-polls at 30 s). Past
   * MAX_WAITERS long-polls on this resource, one answers at once, as a long-poll may: each holds one of the object's
   * timers.
   */
  async waitUntil(meta: MetaRow, ready: (store: EngineStore) => boolean, seconds: number): Promise<void> {
    const deadline = Date.now() + Math.min(seconds, 30) * 1000;
    while (!ready(this.store(meta)) && Date.now() < deadline && this.waiters.size < MAX_WAITERS) {
      let wake!: () => void;
      const woken = new Promise<void>((resolve) => (wake = resolve));
      this.waiters.add(wake);
      const timer = setTimeout(wake, deadline - Date.now());
      await woken;
      clearTimeout(timer);
      this.waiters.delete(wake);
      meta = this.meta.stillHere();
    }
  }

  /** Work in one transaction, then what it asked for once committed. */
  async commit<T>(meta: MetaRow, work: (store: EngineStore) => T): Promise<T> {
    const pending = afterCommit();
    const out = this.storage.transactionSync(() => work(this.store(meta, this.clock.now(), pending)));
    await this.afterWork(meta, pending);
    return out;
  }

  /** The kind's own timer (a wakeup's moment, a schedule's tick), when due; its async step may fetch first. */
  async fireDueTimer(): Promise<void> {
    const meta = this.meta.get()!;
    const config = this.meta.config(meta);
    const timer = dueTimer(meta, config, this.storage.sql, this.env, this.clock.now());
    if (!timer) return;
    await this.outbox.intents.scope(() => this.fireTimer(meta, config, timer));
  }

  private async fireTimer(
    meta: MetaRow,
    config: unknown,
    timer: NonNullable<ReturnType<typeof dueTimer>>,
  ): Promise<void> {
    const ctx = this.prepareContext(meta);
    const prepared = await timer.prepare?.(ctx, config);
    const current = this.meta.get();
    try {
      // Still due? The resource may have ended, or an operation moved the timer, while the step awaited.
      if (
        current &&
        !this.meta.endingState(current) &&
        dueTimer(current, config, this.storage.sql, this.env, this.clock.now())
      ) {
        await this.commit(current, (store) => timer.fire(store, config, prepared));
        return;
      }
    } catch (err) {
      await timer.discard?.(ctx, prepared);
      throw err;
    }
    await timer.discard?.(ctx, prepared);
  }

  /**
   * After committed work: put what it sent on the queue, make the R2 deletes it recorded, and
   * follow its timer if it moved one. The work has committed (and been charged), so nothing
   * here may fail the call: what does not happen now stays in the outbox for the alarm, and
   * a request that can never be queued is logged as dead (the kind hears so).
   */
  async afterWork(meta: MetaRow, pending: AfterCommit): Promise<void> {
    try {
      for (const report of await this.outbox.carryOut(pending, meta.signing_secret)) await this.settleDelivery(report);
    } catch (err) {
      console.error(`${meta.id}: outbox left to the alarm`, err);
    }
    // The alarm already set (at the latest, expiry) runs the timer late rather than never.
    if (requireKind(meta.kind).timer)
      await this.armAlarm().catch((err) => console.error(`${meta.id}: alarm not re-armed`, err));
    for (const wake of this.waiters) wake();
  }

  /**
   * An attempt (or the end) of a delivery, into the log; the end is told to the kind in the same
   * transaction, so what it does next (a stable address's next replay) cannot be lost to a crash
   * between the two. Answers whether the reporting message should go on retrying; once the
   * resource is gone its last events still go out, on the queue's schedule.
   */
  async settleDelivery(report: DeliveryReport): Promise<boolean> {
    const meta = this.meta.get();
    if (!meta) return true;
    const finished = requireKind(meta.kind).onDeliveryFinished;
    const final = report.final;
    const pending = afterCommit();
    const { retry } = this.storage.transactionSync(() => {
      const logged = this.outbox.deliveries.record(report);
      if (logged.settled && final && finished)
        finished(this.store(meta, this.clock.now(), pending), this.meta.config(meta), report.deliveryId, final);
      return logged;
    });
    await this.outbox.flushReleased(); // a settled delivery may have let its stored body go
    await this.afterWork(meta, pending);
    return retry;
  }

  /** The alarm's part of the outbox (resource/outbox.ts); a delivery that died there is settled with the kind. */
  async finishOutbox(meta: MetaRow): Promise<void> {
    for (const report of await this.outbox.finishDue(meta.signing_secret)) await this.settleDelivery(report);
  }

  /**
   * Before an end deletes the storage, and the log with it: every delivery not yet on the queue is put there now (one
   * that dies on the way is settled). False while the queue refuses one: the storage has to stay for another try.
   */
  async queueAllBeforeEnd(meta: MetaRow): Promise<boolean> {
    for (const report of await this.outbox.queueAll(meta.signing_secret)) await this.settleDelivery(report);
    return this.outbox.allQueued();
  }

  /** Sends a dead delivery again (the owner's retry, or the operator's after an outage of its own). */
  async retryDelivery(meta: MetaRow, deliveryId: string): Promise<Json> {
    if (!meta.signing_secret) throw new AppError("not_found", "This resource sends no events.");
    const { view, dead } = await this.outbox.deliveries.retry(deliveryId, meta.signing_secret);
    for (const report of dead) await this.settleDelivery(report);
    return view;
  }

  /** Sends a lifecycle event to notify_url, when the resource has one. */
  async emit(meta: MetaRow, type: string, data: Record<string, unknown>, uniqueBy: string): Promise<void> {
    if (meta.notify_url && meta.signing_secret)
      await this.outbox.deliveries.emit(meta.notify_url, meta.signing_secret, type, data, uniqueBy);
  }
}
