/**
 * A resource's life: made (create), lengthened (extend), ended (expiry or cancel). Creates and
 * extends are charged straight at the account, so each writes its charge down first and crosses it
 * off with its work (direct-charges.ts); what a dead process leaves is given back (and a half-made
 * resource undone) by the alarm (charges-in-flight.ts). A part of ResourceObject, which holds the RPC surface.
 */
import { digestsEqual } from "../../src/auth/ids";
import { AppError, capture, unwrap, type Result } from "../../src/http/errors";
import { loadKind, requireKind } from "../../src/resources/kinds";
import type { Payer } from "../../src/money/payment";
import { deletePrefix } from "../../src/kind/r2";
import {
  deleteResourceIndex,
  endResourceIndex,
  insertResourceIndex,
  updateResourceExpiry,
} from "../../src/kind/index-table";
import type { CreateInput } from "../../src/rpc/resource";
import {
  awaitsSettlement,
  crossOff,
  DirectCharge,
  giveBack,
  isCreation,
  pendingCharges,
  type PendingCharge,
} from "./direct-charges";
import { ChargesInFlight } from "./charges-in-flight";
import { afterCommit } from "./engine-store";
import { nextNoticeAt, noticesStillSent, sendDueNotices } from "./lifecycle-notices";
import { insertMeta, type MetaRow, type RecordCore, type ResourceState } from "./meta";
import type { Env } from "../../src/env";
import type { ResourceFaults } from "../../src/rpc/resource";
import type { MetaCell } from "./meta-cell";
import type { ResourceClock } from "./clock";
import type { ResourceOutbox } from "./outbox";
import type { ResourceWork } from "./work";
import type { Billing } from "./billing";
import { createTables, tableLists } from "./migrations";
import { dieAt, InjectedDeath } from "./test-faults";
import { joinSandbox, refuseOutsideMoney } from "./sandbox-clock";
import { sandboxStub } from "../../src/stubs";

export class ResourceLifecycle {
  /** The direct charges of this resource that run in this process, and those a dead one left. */
  private readonly charges: ChargesInFlight;

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
    return capture(async () => {
      // A creation a dead process left (its caller's retry came before the alarm): undone and given back now, so the
      // retry makes the resource afresh, paid once, instead of a 409 for a resource its caller never got.
      if (this.charges.leftBehind().some((p) => isCreation(p) && !awaitsSettlement(p))) await this.recoverCharges();
      const existing = this.meta.get();
      const creating = pendingCharges(this.sql).some((p) => isCreation(p) && !awaitsSettlement(p));
      if (existing && !creating && digestsEqual(existing.mgmt_hash, input.mgmtHash)) {
        // The same create again: under an Idempotency-Key the token derives from the key and the request, so only a
        // retry of the request that made this resource carries it (its answer was lost). It gets the resource, unpaid.
        return this.work.record(existing, "active");
      }
      if (existing || creating) throw new AppError("conflict", "This resource already exists.");
      const kind = await loadKind(input.kind);
      // Written down before the payment, with the alarm as the backstop; crossed off once made and indexed.
      const charge = new DirectCharge(this.env, this.sql, input.payer, input.priceMicro, {
        resourceId: input.id,
        operation: `${input.kind}.create`,
        requestId: input.requestId,
      });
      // What init sends (an approval's request to its approvers) goes out once the resource is indexed.
      const pending = afterCommit();
      let indexing = false;
      let meta: MetaRow;
      try {
        await this.charges.begin(charge);
        await charge.take();
        dieAt(this.faults, "create-after-charge");
        // Sandbox money makes a sandbox's resource, on the sandbox's clock from its first moment (sandbox-clock.ts).
        if (charge.paidBySandbox) await this.joinSandbox(charge.paidBySandbox, input);
        const now = this.clock.now();
        meta = {
          id: input.id,
          kind: input.kind,
          owner: input.owner,
          mgmt_hash: input.mgmtHash,
          label: input.label,
          notify_url: input.notifyUrl,
          config: input.configJson,
          created_at: now,
          expires_at: now + input.ttlSeconds * 1000,
          charged: input.priceMicro,
          signing_secret: input.sealedSecret,
          notices_sent: 0,
          public_id: input.publicId,
          public_disabled: 0,
          base_url: input.baseUrl,
          ended: null,
        };
        const made = meta;
        this.ctx.storage.transactionSync(() => {
          createTables(this.sql, tableLists(kind));
          insertMeta(this.sql, made);
          this.meta.set(made); // the outbox reads the resource's id from it
          kind.init?.(this.work.store(made, now, pending), JSON.parse(input.configJson), JSON.parse(input.sealedJson));
        });
        dieAt(this.faults, "create-after-commit");
        indexing = true;
        await insertResourceIndex(this.env.DB, {
          ...meta,
          created_at: this.indexTime(meta.created_at),
          expires_at: this.indexTime(meta.expires_at),
        });
        dieAt(this.faults, "create-after-index");
        // Paid by x402, it stays written down until the worker has settled the payment (settledCreate).
        if (!charge.pending.settles) charge.crossOff();
      } catch (err) {
        // Undone here; should that fail too, the pending row and the alarm finish it. The caller gets the first error.
        if (!(err instanceof InjectedDeath))
          await this.undoCreation(charge.pending, charge.charged, indexing).catch((undo) =>
            console.error(`${input.id}: creation left to the alarm`, undo),
          );
        throw err;
      } finally {
        this.charges.finished(input.requestId);
      }
      // Until this moves it, the backstop stays set: should this fail, it runs as an ordinary alarm and re-arms.
      await this.armAlarm().catch((err) => console.error(`${meta.id}: alarm not armed after create`, err));
      await this.work.afterWork(meta, pending);
      dieAt(this.faults, "create-answer-lost");
      return this.work.record(meta, "active");
    });
  }

  /** The worker settled the x402 payment of this resource's create: it is paid for, and stays. */
  settledCreate(requestId: string): Promise<Result<null>> {
    return capture(() => {
      crossOff(this.sql, requestId);
      return null;
    });
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
      await updateResourceExpiry(this.env.DB, meta.id, this.indexTime(this.meta.get()!.expires_at)).catch((err) =>
        console.error(`${meta.id}: index expiry not updated`, err),
      );
      return this.work.record(this.meta.get()!, "active");
    });
  }

  /**
   * A moment of the resource's clock as the D1 index keeps it. A sandbox's resource is indexed in real time, the time
   * its sandbox is checked live by and ends by (its real-time TTL), and the time the index's own sweeps count
   * (tombstones leave 30 real days after the end); its own answers keep the sandbox's clock. A resource whose test
   * clock moved keeps that clock in the index too, as if the time had passed.
   */
  private indexTime(resourceTime: number): number {
    return this.clock.sandboxId ? resourceTime - this.clock.offset : resourceTime;
  }

  /** Joins the sandbox whose money paid for this creation: it answers its clock, which this resource then keeps. */
  private async joinSandbox(sandboxId: string, input: CreateInput): Promise<void> {
    const { offsetMs, deliveries } = unwrap(
      await sandboxStub(this.env, sandboxId).join({ resourceId: input.id, kind: input.kind }),
    );
    this.clock.sandboxId = sandboxId;
    this.clock.offset = joinSandbox(this.sql, sandboxId, offsetMs, deliveries);
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
    await deletePrefix(this.env.BUCKET, `${meta.id}/`);
    await endResourceIndex(
      this.env.DB,
      meta.id,
      state,
      this.indexTime(this.clock.now()),
      this.indexTime((this.meta.get() ?? meta).expires_at),
    );
    await this.charges.settleBeforeEnd();
    this.meta.ending = null;
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

  /**
   * Undoes a creation that did not finish (resource/direct-charges.ts): the charge is given back first
   * (until it is, the pending row and the alarm stay, and the alarm tries again), then the index row and
   * every byte. `charged` as in DirectCharge: undefined asks the account for the charge, if one was taken;
   * `mayBeIndexed` false spares a refused creation the D1 write.
   */
  private async undoCreation(creation: PendingCharge, charged?: number | null, mayBeIndexed = true): Promise<void> {
    await giveBack(this.env, creation, charged);
    if (mayBeIndexed) await deleteResourceIndex(this.env.DB, creation.resource_id);
    await this.deleteStorage();
  }

  /** Pending charges a dead process left behind, given back (charges-in-flight.ts); true: the alarm stops here. */
  recoverCharges(): Promise<boolean> {
    return this.charges.recover((creation) => this.undoCreation(creation));
  }
}
