/**
 * One per resource: the kind's state in SQLite, the alarm for TTL expiry and
 * billing settlement, and the data-plane dispatch to the kind's engine.
 * Data-plane calls paid with a credit token are charged here, against a hold
 * (resource/billing.ts), in the same transaction as the work: a refused or
 * failed call never reaches the ledger. Its life (create, extend, end) is
 * resource/lifecycle.ts.
 */
import { AppError, capture, type Result } from "../src/http/errors";
import { requireKind } from "../src/resources/registry";
import type { PublicAnswer } from "../src/resources/public-face";
import { digestsEqual } from "../src/auth/ids";
import { afterCommit } from "./resource/engine-store";
import type { Json } from "../src/json";
import type { AdoptedObject, ResourceFaults, DeliveryReport, OpInput, PublicInput, PublicSettled, RelayInput, ResourceApi } from "../src/rpc/resource";
import type { MetaRow, RecordCore } from "./resource/meta";
import { advanceClockOffset } from "./resource/test-clock";
import { dryRun } from "./resource/transactions";
import { checkedFaults } from "./resource/test-faults";
import { ResourceInSandbox } from "./resource/in-sandbox";
import { refuseOutsideMoney } from "./resource/sandbox-clock";


/** Refuses (in the transaction, so it rolls back uncharged) an answer that is not the one the caller already acted on. */
function expected(out: Json, expect: OpInput["expect"]): Json {
  if (!expect) return out;
  const got = out as Record<string, Json>;
  const moved = Object.keys(expect).find((k) => got?.[k] !== expect[k]);
  if (moved) throw new AppError("conflict", "The content changed during the call (it was replaced or deleted); nothing was charged. Retry.", { extra: { changed: moved } });
  return out;
}

export class ResourceObject extends ResourceInSandbox implements ResourceApi {
  status(mgmtHash: string): Promise<Result<RecordCore>> {
    return capture(() => this.record(this.authorize(mgmtHash), "active"));
  }

  exportAll(mgmtHash: string): Promise<Result<{ resource: RecordCore; data: Json }>> {
    return capture(() => {
      const meta = this.authorize(mgmtHash);
      const kind = requireKind(meta.kind);
      return { resource: this.record(meta, "active"), data: kind.exportData(this.store(meta), this.config(meta)) };
    });
  }

  cancel(mgmtHash: string): Promise<Result<RecordCore>> {
    return capture(async () => this.end(this.authorize(mgmtHash), "cancelled"));
  }

  /** `body`: the raw request bytes of a rawBody operation, streamed through. */
  op(input: OpInput, body: ReadableStream<Uint8Array> | null = null): Promise<Result<Json>> {
    return capture(async () => {
      const meta = this.authorizeKind(input.mgmtHash, input.kind);
      const op = requireKind(meta.kind).ops.find((o) => o.name === input.op);
      if (!op) throw new AppError("not_found", `Unknown operation ${input.op}.`);
      refuseOutsideMoney(this.clock.sandboxId, input.payer, input.priceMicro);
      const config = this.config(meta);
      if (input.peek) {
        if (op.prepare) throw new Error(`${meta.kind}.${op.name}: an operation with a prepare step cannot be peeked`);
        return dryRun(this.ctx.storage, () => op.run(this.store(meta, this.now(), afterCommit()), config, input.input, undefined));
      }
      if (op.ready) await this.waitUntil(meta, (store) => op.ready!(store, config, input.input), (input.input as { wait_seconds?: number }).wait_seconds ?? 0);
      // A call that cannot be paid is refused before its prepare step does work it would then have to undo.
      if (op.prepare && input.priceMicro && input.payer.type !== "prepaid") await this.billing().reserve(input.payer, input.priceMicro);
      return this.prepared(meta, op.prepare && ((ctx) => op.prepare!(ctx, config, input.input, body)), op.discard, async (prepared) => {
        const price = input.priceMicro;
        const pending = afterCommit();
        const run = (current: MetaRow) => expected(op.run(this.store(current, this.now(), pending), config, input.input, prepared), input.expect);
        const payer = input.payer;
        if (payer.type === "prepaid" || price === 0) {
          // Paid by x402 in the worker (or free). No await between the work and the total: they commit together.
          const out = this.ctx.storage.transactionSync(() => run(meta));
          if (price) this.updateMeta({ charged: this.cached!.charged + price });
          await this.afterWork(meta, pending);
          return out;
        }
        const out = await this.billing().spend(this.ctx.storage, payer, price, { operation: `${meta.kind}.${op.name}`, requestId: input.requestId }, () => run(this.stillHere()), async () => {
          Object.assign(pending, afterCommit()); // the dry run before a hold sends and drops nothing
          await this.armAlarm();
          this.stillHere();
        });
        await this.afterWork(meta, pending);
        return out;
      });
    });
  }

  /**
   * A request to the resource's public address: free, no credentials. The worker found this object
   * from the public id and matched the kind's route; the whole id must be this resource's.
   */
  publicRequest(input: PublicInput): Promise<Result<PublicAnswer>> {
    return capture(async () => {
      const meta = this.meta();
      const face = meta && requireKind(meta.kind).public;
      if (!meta || !face || !meta.public_id || !digestsEqual(meta.public_id, input.publicId) || meta.public_disabled) {
        throw new AppError("not_found", "Nothing is served at this address.", { resourceMissing: !meta });
      }
      const ending = this.endingState(meta) ?? (this.now() >= meta.expires_at ? "expired" : null);
      if (ending) throw new AppError(ending === "expired" ? "resource_expired" : "resource_cancelled", `The resource behind this address ${ending === "expired" ? "has expired" : "was cancelled"}.`);
      const config = this.config(meta);
      const handled = await this.prepared(meta, face.prepare && ((ctx) => face.prepare!(ctx, config, input.request)), face.discard && ((ctx, p) => face.discard!(ctx, config, p)), (prepared) =>
        this.commit(meta, (store) => face.handle(store, config, input.request, prepared)),
      );
      const answer = face.finish ? await face.finish(this.prepareContext(meta), config, input.request, handled) : (handled as PublicAnswer);
      // Reused no later than the resource's end (in the worker's time: a test clock runs ahead of it).
      return answer.reuse ? { ...answer, reuse: { ...answer.reuse, until: Date.now() + (meta.expires_at - this.now()) } } : answer;
    });
  }

  publicSettled(input: PublicSettled): Promise<Result<null>> {
    return capture(async () => {
      const meta = this.meta();
      const settled = meta && requireKind(meta.kind).public?.settled;
      if (!meta || !settled || this.endingState(meta) || !meta.public_id || !digestsEqual(meta.public_id, input.publicId)) return null;
      await this.commit(meta, (store) => settled(store, this.config(meta), input.report, { status: input.status, durationMs: input.durationMs }));
      return null;
    });
  }

  /** A message another resource relayed here: the kind takes it in a transaction (once per relay id); an ended resource takes nothing. */
  relay(input: RelayInput): Promise<Result<null>> {
    return capture(async () => {
      const meta = this.meta();
      const relay = meta && requireKind(meta.kind).relay;
      if (!meta || !relay || this.endingState(meta) || this.now() >= meta.expires_at) {
        throw new AppError("not_found", meta && !relay ? `A ${meta.kind} resource takes no relayed messages.` : "The resource has ended.");
      }
      await this.commit(meta, (store) => relay(store, this.config(meta), JSON.parse(input.body) as Json, input.deliveryId, input.from));
      return null;
    });
  }

  /** What this resource shares with another of its owner's (a link serving a blob's bytes); an ended one shares nothing. */
  sharedObject(): Promise<Result<{ key: string } | null>> {
    return capture(() => {
      const meta = this.meta();
      const shared = meta && requireKind(meta.kind).shared;
      if (!meta || !shared || this.endingState(meta) || this.now() >= meta.expires_at) return null;
      return shared(this.store(meta), this.config(meta));
    });
  }

  /** Takes bytes another of its owner's resources wrote below this one's prefix (a transfer's copy) as its own content. */
  adoptObject(input: AdoptedObject): Promise<Result<null>> {
    return capture(async () => {
      const meta = this.meta();
      const adopt = meta && requireKind(meta.kind).adopt;
      if (!meta || !adopt || this.endingState(meta) || this.now() >= meta.expires_at) {
        throw new AppError("not_found", meta && !adopt ? `A ${meta.kind} resource takes no content from other resources.` : "The resource has ended.");
      }
      if (!input.key.startsWith(`${meta.id}/`)) throw new AppError("forbidden", "The content is not below this resource's prefix.");
      await this.commit(meta, (store) => adopt(store, this.config(meta), input));
      return null;
    });
  }

  /** The operator disabled (or enabled again) this resource's public address: mirrored here, so no hit reads D1. */
  setPublicDisabled(input: { publicId: string; disabled: boolean }): Promise<Result<boolean>> {
    return capture(() => {
      const meta = this.meta();
      if (!meta || meta.public_id !== input.publicId) return false;
      this.updateMeta({ public_disabled: input.disabled ? 1 : 0 });
      return true;
    });
  }

  /** The account asks for its held money back (to report an exact balance, or because it ran short). */
  flushBilling(): Promise<Result<null>> {
    return capture(async () => {
      if (this.meta()) await this.billing().flush("all");
      return null;
    });
  }

  /**
   * TTL expiry and due settlements. The runtime retries the alarm if this throws, so neither is skipped.
   * Runs one at a time: a run awaits I/O (a timer's prepare step, a settlement), and another entry into
   * the alarm meanwhile (the test clock's, or the runtime's while that one runs) would start the same due
   * work twice.
   */
  override alarm(): Promise<void> {
    const run = this.alarmRunning.then(() => this.alarmInSandbox(() => this.runAlarm()));
    this.alarmRunning = run.catch(() => undefined);
    return run;
  }

  private alarmRunning: Promise<void> = Promise.resolve();

  private async runAlarm(): Promise<void> {
    this.clock.alarmCleared();
    if (await this.recoverCharges()) return;
    try {
      const meta = this.meta();
      if (!meta) return await this.armAlarm(); // a creation still running here keeps its backstop
      if (meta.ended || this.now() >= meta.expires_at) {
        await this.end(meta, meta.ended ?? "expired"); // an end that failed part-way resumes here
        return;
      }
      await this.billing().flush("due");
      await this.finishOutbox(meta);
      // Read again: an extend may have moved expires_at while settlement waited.
      await this.sendDueNotices(this.meta()!);
      await this.fireDueTimer();
      await this.armAlarm();
    } catch (err) {
      // The platform gives up on an alarm after a few failed runs; expiry must not be lost, so re-arm.
      console.error("resource alarm failed; trying again in a minute", err);
      if (this.meta()) await this.clock.alarmAt(this.now() + 60_000);
    }
  }

  /**
   * Test only (ENVIRONMENT=test): moves this resource's clock `ms` ahead and answers its now. What
   * is due by then runs here, before this answers, as the alarm would run it (`runDue` false leaves
   * it to the alarm, armed for now); the alarm is never left in the past for the runtime to race.
   */
  async advanceClock(ms: number, runDue = true): Promise<number> {
    this.clock.offset = advanceClockOffset(this.env, this.sql, ms);
    for (let run = 0; runDue && run < 50 && (this.nextAlarmAt() ?? Infinity) <= this.now(); run++) await this.alarm();
    await this.armAlarm();
    return this.now();
  }

  /** The consumer of the DELIVERIES queue reports each attempt here (nothing to do once the resource is gone). */
  /** Answers whether the reporting message should go on retrying. */
  async recordDelivery(report: DeliveryReport): Promise<boolean> {
    return this.settleDelivery(report);
  }

  /** Test only (ENVIRONMENT=test): faults in this resource's object (resource/test-faults.ts). */
  injectFaults(faults: ResourceFaults): void {
    Object.assign(this.faults, checkedFaults(this.env, faults));
  }

  listDeliveries(input: { mgmtHash: string; kind: string; limit: number; cursor: string | null }): Promise<Result<{ items: Json[]; next_cursor: string | null }>> {
    return capture(() => {
      this.authorizeKind(input.mgmtHash, input.kind);
      return this.outbox.deliveries.list(input.limit, input.cursor);
    });
  }

  retryDelivery(input: { mgmtHash: string; kind: string; deliveryId: string }): Promise<Result<Json>> {
    return capture(() => this.retryDeliveryOf(this.authorizeKind(input.mgmtHash, input.kind), input.deliveryId));
  }

  /** The operator sends a dead delivery again (after an outage of its own), without the owner's token. */
  operatorRetryDelivery(deliveryId: string): Promise<Result<Json>> {
    return capture(() => this.retryDeliveryOf(this.stillHere(), deliveryId));
  }

  private async retryDeliveryOf(meta: MetaRow, deliveryId: string): Promise<Json> {
    if (!meta.signing_secret) throw new AppError("not_found", "This resource sends no events.");
    const { view, dead } = await this.outbox.deliveries.retry(deliveryId, meta.signing_secret);
    for (const report of dead) await this.settleDelivery(report);
    return view;
  }
}
