/**
 * What committed work obliges a resource to do afterwards, kept with it: the deliveries log (deliveries.ts), put on
 * the queue by delivery-dispatch.ts, and the pending R2 deletes (r2-drops.ts), among them the intents of puts not
 * yet committed (r2-intents.ts). A transaction records into them through `recorder`; the work's caller carries out
 * what it recorded once it has committed; the alarm carries out whatever a dying process did not.
 */
import type { Env } from "../../src/env";
import type { DeliveryReport } from "../../src/rpc/resource";
import type { ResourceFaults } from "../../src/rpc/resource-faults";
import type { AfterCommit, Outbox } from "./engine-store";
import { DeliveryLog } from "./deliveries";
import { DeliveryDispatch } from "./delivery-dispatch";
import { R2Drops } from "./r2-drops";
import { R2Intents } from "./r2-intents";
import type { ResourceClock } from "./clock";

export class ResourceOutbox {
  private deliveriesOf: DeliveryLog | undefined;
  private dispatcherOf: DeliveryDispatch | undefined;
  private dropsOf: R2Drops | undefined;
  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly env: Env,
    private readonly clock: ResourceClock,
    /** The resource's id (read lazily: the object knows it once its meta row exists). */
    private readonly resourceId: () => string,
    /** Test-only faults (injectFaults, ENVIRONMENT=test). */
    private readonly faults: ResourceFaults,
  ) {
    this.intents = new R2Intents(clock, () => this.drops);
  }

  get deliveries(): DeliveryLog {
    this.deliveriesOf ??= new DeliveryLog(
      this.storage.sql,
      this.env,
      this.resourceId(),
      this.clock,
      this.drops,
      this.dispatcher,
      this.faults,
    );
    return this.deliveriesOf;
  }

  /** Kept across an end: it is this process's memory of calls under way, not a table. */
  readonly intents: R2Intents;

  /** Puts the log's rows on the queue (delivery-dispatch.ts). */
  get dispatcher(): DeliveryDispatch {
    this.dispatcherOf ??= new DeliveryDispatch(this.storage.sql, this.env, this.resourceId(), this.clock, this.faults);
    return this.dispatcherOf;
  }

  get drops(): R2Drops {
    this.dropsOf ??= new R2Drops(this.storage.sql, this.env.BUCKET, () => this.clock.now(), this.faults);
    return this.dropsOf;
  }

  /** The resource ended: its tables are gone. */
  reset(): void {
    this.deliveriesOf = undefined;
    this.dispatcherOf = undefined;
    this.dropsOf = undefined;
  }

  /** Where a transaction's sends and R2 deletes are recorded; each also brings the alarm within reach. */
  recorder(pending: AfterCommit): Outbox {
    return {
      pending,
      send: (id, request) => {
        if (this.deliveries.stage(id, request)) pending.sends.push(id);
        pending.drops.push(...this.deliveries.takeReleased());
        this.clock.armSoon();
      },
      cancel: (id) => {
        const open = this.deliveries.cancel(id);
        pending.drops.push(...this.deliveries.takeReleased());
        return open;
      },
      drop: (keys) => {
        this.drops.stage(keys);
        pending.drops.push(...keys);
        this.clock.armSoon();
      },
    };
  }

  /** When the alarm must next act for the outbox, on the resource's clock. */
  nextDueAt(): number | null {
    const times = [this.dispatcher.nextDueAt(), this.drops.nextDueAt()].filter((t): t is number => t !== null);
    return times.length ? Math.min(...times) : null;
  }

  /** After a commit: queues what it sent and deletes what it dropped. Answers the deliveries that died on the way. */
  async carryOut(pending: AfterCommit, signingSecret: string | null): Promise<DeliveryReport[]> {
    const dead =
      pending.sends.length && signingSecret ? await this.dispatcher.dispatch(pending.sends, signingSecret) : [];
    if (pending.drops.length) await this.drops.flush(pending.drops);
    return dead;
  }

  /**
   * The alarm's part: sends again what did not reach the queue or was not heard of, trims the log
   * to its retention, makes the R2 deletes left over. Answers the deliveries that died on the way.
   */
  async finishDue(signingSecret: string | null): Promise<DeliveryReport[]> {
    const dead = signingSecret ? await this.dispatcher.dispatchDue(signingSecret) : [];
    this.storage.transactionSync(() => this.deliveries.prune());
    await this.flushReleased();
    await this.drops.flush(undefined, this.intents.isWriting);
    return dead;
  }

  /**
   * Before an end deletes the tables, which would lose a delivery not yet on the queue: each goes now, whatever it
   * waited for. Answers the deliveries that died on the way (for the caller to settle before it asks `allQueued`).
   */
  async queueAll(signingSecret: string | null): Promise<DeliveryReport[]> {
    return signingSecret ? this.dispatcher.dispatchUnqueued(signingSecret) : [];
  }

  /** Whether every delivery still being attempted is on the queue (none waits in the log to be put there). */
  allQueued(): boolean {
    return this.dispatcher.unqueued() === 0;
  }

  /** Deletes at once the stored bodies that deliveries just settled (or pruned) let go of. */
  async flushReleased(): Promise<void> {
    const released = this.deliveries.takeReleased();
    if (released.length) await this.drops.flush(released);
  }
}
