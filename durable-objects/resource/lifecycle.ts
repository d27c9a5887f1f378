/**
 * A resource's life: made (create), lengthened (extend), ended (expiry or cancel). Creates and
 * extends are charged straight at the account, so each writes its charge down first and crosses it
 * off with its work (direct-charges.ts); what a dead process leaves is given back (and a half-made
 * resource undone) by the alarm (charges-in-flight.ts). Making and undoing a creation are creation.ts. A part of
 * ResourceObject, which holds the RPC surface.
 */
import { AppError, capture, type Result } from "../../src/http/errors";
import { requireKind } from "../../src/resources/kinds";
import type { Payer } from "../../src/money/payment";
import { deletePrefix } from "../../src/kind/r2";
import { keepEndedBodies } from "../../src/delivery/ended-bodies";
import { endResourceIndex, updateResourceExpiry } from "../../src/kind/index-table";
import type { CreateInput } from "../../src/rpc/resource";
import { DirectCharge } from "./direct-charges";
import { ChargesInFlight } from "./charges-in-flight";
import { ResourceCreation } from "./creation";
import { nextNoticeAt, noticesStillSent, sendDueNotices } from "./lifecycle-notices";
import type { MetaRow, RecordCore, ResourceState } from "./meta";
import type { Env } from "../../src/env";
import type { ResourceFaults } from "../../src/rpc/resource-faults";
import type { MetaCell } from "./meta-cell";
import type { ResourceClock } from "./clock";
import type { ResourceOutbox } from "./outbox";
import type { ResourceWork } from "./work";
import type { Billing } from "./billing";
import { dieAt, InjectedDeath } from "./test-faults";
import { refuseOutsideMoney } from "./sandbox-clock";

export class ResourceLifecycle {
  /** The direct charges of this resource that run in this process, and those a dead one left. */
  private readonly charges: ChargesInFlight;
  /** Making the resource, and undoing a creation that did not finish (creation.ts). */
  private readonly creation: ResourceCreation;

  constructor(
    private readonly ctx: DurableObjectState,
    private readonly env: Env,
    private readonly meta: MetaCell,
    private readonly clock: ResourceClock,
    private readonly outbox: ResourceOutbox,
    private readonly work: ResourceWork,
    private readonly billing: () => Billing,
    /** Forgets the billing part's memory, when the storage it mirrors is deleted. */
    private readonly forgetBilling: () => void,
    private readonly faults: ResourceFaults,
    private readonly armAlarm: () => Promise<void>,
  ) {
    this.charges = new ChargesInFlight(ctx.storage.sql, env, clock);
    this.creation = new ResourceCreation(ctx, env, meta, clock, work, this.charges, faults, armAlarm, () =>
      this.deleteStorage(),
    );
  }

  private get sql(): SqlStorage {
    return this.ctx.storage.sql;
  }

  /**
   * When the alarm must next run for the resource's life: a running charge's backstop, expiry, the next expiry notice.
   */
  nextDueAt(): number | null {
    const meta = this.meta.get();
    const next = Math.min(
      this.charges.nextDueAt() ?? Infinity,
      meta?.expires_at ?? Infinity,
      (meta && nextNoticeAt(meta)) ?? Infinity,
    );
    return next === Infinity ? null : next;
  }

  async sendDueNotices(meta: MetaRow): Promise<void> {
    const sent = await sendDueNotices(meta, this.clock.now(), (type, data) =>
      this.work.emit(meta, type, data, `${meta.expires_at}:${String(data.hours_left)}`),
    );
    if (sent !== meta.notices_sent) this.meta.update({ notices_sent: sent });
  }

  create(input: CreateInput): Promise<Result<RecordCore>> {
    return this.creation.create(input);
  }

  /** The worker settled the x402 payment of this resource's create: it is paid for, and stays. */
  settledCreate(requestId: string): Promise<Result<null>> {
    return this.creation.settledCreate(requestId);
  }

  /** Moves expires_at by `ttlSeconds`, charging `priceMicro` (the worker priced it from the registry). */
  extend(input: {
    mgmtHash: string;
    ttlSeconds: number;
    priceMicro: number;
    payer: Payer;
    requestId: string;
  }): Promise<Result<RecordCore>> {
    return capture(async () => {
      const meta = this.meta.authorize(input.mgmtHash, { name: "extend_resource" });
      const kind = requireKind(meta.kind);
      const limit = this.clock.now() + kind.maxTtlSeconds * 1000;
      if (meta.expires_at + input.ttlSeconds * 1000 > limit) {
        const most = Math.max(0, Math.floor((limit - meta.expires_at) / 1000));
        throw new AppError(
          "validation_failed",
          `A ${meta.kind} lives at most ${kind.maxTtlSeconds} s from now; it can be extended by ${most} s at most.`,
          {
            errors: [{ path: "ttl_seconds", message: `must be at most ${most}` }],
          },
        );
      }
      refuseOutsideMoney(this.clock.sandboxId, input.payer, input.priceMicro);
      const charge = new DirectCharge(
        this.env,
        this.sql,
        input.payer,
        input.priceMicro,
        { resourceId: meta.id, operation: `${meta.kind}.extend`, requestId: input.requestId },
        this.clock.sandboxId,
      );
      try {
        await this.charges.begin(charge);
        await charge.take();
        dieAt(this.faults, "extend-after-charge");
        const current = this.meta.get();
        if (!current || this.meta.endingState(current)) {
          await charge.giveBack();
          throw new AppError("not_found", "The resource ended while it was being extended.", { resourceMissing: true });
        }
        const moved = {
          ...current,
          expires_at: current.expires_at + input.ttlSeconds * 1000,
          charged: current.charged + input.priceMicro,
        };
        this.ctx.storage.transactionSync(() => {
          this.meta.update({
            expires_at: moved.expires_at,
            charged: moved.charged,
            notices_sent: noticesStillSent(moved, this.clock.now()),
          });
          charge.crossOff();
        });
      } catch (err) {
        // Nothing taken: only crossed off. Should the refund fail, the pending row and the alarm finish it.
        if (!(err instanceof InjectedDeath))
          await charge
            .giveBack()
            .catch((refund) => console.error(`${meta.id}: extension's refund left to the alarm`, refund));
        throw err;
      } finally {
        this.charges.finished(input.requestId);
      }
      await this.armAlarm();
      // The index's copy of the expiry is for the tombstone, which end() writes again: a failure here fails nothing.
      await updateResourceExpiry(this.env.DB, meta.id, this.clock.indexTime(this.meta.get()!.expires_at)).catch((err) =>
        console.error(`${meta.id}: index expiry not updated`, err),
      );
      return this.work.record(this.meta.get()!, "active");
    });
  }

  /** Settles billing, then deletes every byte the resource held (R2 prefix, all storage), leaving the D1 tombstone. */
  async end(meta: MetaRow, state: Exclude<ResourceState, "active">): Promise<RecordCore> {
    this.meta.ending = state;
    try {
      await this.billing().flush("all");
    } catch (err) {
      this.meta.ending = null; // money not settled: keep the resource, so settlement can be retried
      throw err;
    }
    // From here the end only deletes: recorded, so a failure part-way is resumed by the alarm, never left half-done.
    if (!this.meta.get()?.ended) this.meta.update({ ended: state });
    await this.clock.alarmAt(this.clock.now() + 60_000);
    dieAt(this.faults, "end-after-mark");
    const record = this.work.record(this.meta.get() ?? meta, state);
    const at = new Date().toISOString();
    // The event must not hold back the deletion it announces.
    await this.work
      .emit(
        meta,
        `resource.${state}`,
        state === "expired" ? { expired_at: at } : { cancelled_at: at },
        String(meta.expires_at),
      )
      .catch((err) => console.error(`lifecycle event of ${meta.id} not sent`, err));
    await requireKind(meta.kind).end?.(this.work.prepareContext(meta), this.meta.config(meta));
    // What the deliveries still under way will send outlives the resource, as they do (src/delivery/ended-bodies.ts).
    const stillSent = this.outbox.deliveries.bodiesStillSent();
    await keepEndedBodies(this.env.DB, stillSent, Date.now());
    await deletePrefix(this.env.BUCKET, `${meta.id}/`, new Set(stillSent));
    await endResourceIndex(
      this.env.DB,
      meta.id,
      state,
      this.clock.indexTime(this.clock.now()),
      this.clock.indexTime((this.meta.get() ?? meta).expires_at),
    );
    await this.charges.settleBeforeEnd();
    this.meta.ending = null;
    // The storage holds the outbox: a delivery not on the queue yet (a refused send, the event above among them) would
    // be lost with it. While the queue refuses, the end stops here, marked ended, and the alarm resumes it.
    if (!(await this.work.queueAllBeforeEnd(meta))) {
      await this.clock.alarmBy(this.clock.now() + 60_000);
      return record;
    }
    await this.deleteStorage();
    return record;
  }

  /** The last step of an end or an undone creation: every row, the alarm, and what memory kept of them. */
  private async deleteStorage(): Promise<void> {
    this.meta.set(null);
    this.forgetBilling();
    this.outbox.reset();
    this.clock.alarmCleared();
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
  }

  /** Pending charges a dead process left behind, given back (charges-in-flight.ts); true: the alarm stops here. */
  recoverCharges(): Promise<boolean> {
    return this.creation.recoverCharges();
  }
}
