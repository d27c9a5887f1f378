/**
 * A resource's making (create), and its undoing when it did not finish. The charge is written down
 * before the payment and crossed off once the resource is made and indexed (direct-charges.ts); a
 * creation a dead process left is undone and given back, by the alarm or by its caller's retry
 * (charges-in-flight.ts). A part of ResourceLifecycle (lifecycle.ts).
 */
import { digestsEqual } from "../../src/auth/ids";
import { AppError, capture, unwrap, type Result } from "../../src/http/errors";
import { loadKind } from "../../src/resources/kinds";
import { deleteResourceIndex, insertResourceIndex } from "../../src/kind/index-table";
import type { CreateInput } from "../../src/rpc/resource";
import type { ResourceFaults } from "../../src/rpc/resource-faults";
import type { Env } from "../../src/env";
import { sandboxStub } from "../../src/stubs";
import {
  awaitsSettlement,
  crossOff,
  DirectCharge,
  giveBack,
  isCreation,
  pendingCharges,
  type PendingCharge,
} from "./direct-charges";
import type { ChargesInFlight } from "./charges-in-flight";
import { afterCommit } from "./engine-store";
import { insertMeta, type MetaRow, type RecordCore } from "./meta";
import type { MetaCell } from "./meta-cell";
import type { ResourceClock } from "./clock";
import type { ResourceWork } from "./work";
import { createTables, tableLists } from "./migrations";
import { dieAt, InjectedDeath } from "./test-faults";
import { joinSandbox } from "./sandbox-clock";

export class ResourceCreation {
  constructor(
    private readonly ctx: DurableObjectState,
    private readonly env: Env,
    private readonly meta: MetaCell,
    private readonly clock: ResourceClock,
    private readonly work: ResourceWork,
    /** The direct charges of this resource that run in this process, and those a dead one left. */
    private readonly charges: ChargesInFlight,
    private readonly faults: ResourceFaults,
    private readonly armAlarm: () => Promise<void>,
    /** The last step of an undone creation, as of an end: every row, the alarm, and what memory kept of them. */
    private readonly deleteStorage: () => Promise<void>,
  ) {}

  private get sql(): SqlStorage {
    return this.ctx.storage.sql;
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
          created_at: this.clock.indexTime(meta.created_at),
          expires_at: this.clock.indexTime(meta.expires_at),
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

  /** Joins the sandbox whose money paid for this creation: it answers its clock, which this resource then keeps. */
  private async joinSandbox(sandboxId: string, input: CreateInput): Promise<void> {
    const { offsetMs, deliveries } = unwrap(
      await sandboxStub(this.env, sandboxId).join({ resourceId: input.id, kind: input.kind }),
    );
    this.clock.sandboxId = sandboxId;
    this.clock.offset = joinSandbox(this.sql, sandboxId, offsetMs, deliveries);
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
