/**
 * One per resource: the kind's state in SQLite, the alarm for TTL expiry and
 * billing settlement, and the data-plane dispatch to the kind's engine.
 * Data-plane calls paid with a credit token are charged here, against a hold
 * (resource/billing.ts), in the same transaction as the work: a refused or
 * failed call never reaches the ledger.
 *
 * This class is the RPC surface and the alarm; the work is done by parts with
 * their own state, each in resource/: the meta row (meta-cell.ts), the clock
 * (clock.ts), the outbox of sends and R2 deletes (outbox.ts), billing's holds
 * and group commit (billing.ts), how a kind's code runs (work.ts), and the
 * resource's life: create, extend, end (lifecycle.ts).
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../src/env";
import { AppError, capture, type Result } from "../src/http/errors";
import { loadKind, requireKind } from "../src/resources/kinds";
import { loadSealing } from "../src/auth/sealing-loader";
import { PREPARE_ATTEMPTS, PreparedStale, type PublicAnswer } from "../src/kind/public-face";
import { digestsEqual } from "../src/auth/ids";
import type { Json, JsonObject } from "../src/json";
import type {
  AdoptedObject,
  CreateInput,
  DeliveryReport,
  MintTokenInput,
  OpInput,
  TokenView,
  PublicInput,
  PublicSettled,
  RelayInput,
  ResourceApi,
  ResourceFaults,
} from "../src/rpc/resource";
import type { Payer } from "../src/money/payment";
import { afterCommit, nextTimerAt } from "./resource/engine-store";
import type { MetaRow, RecordCore } from "./resource/meta";
import { MetaCell } from "./resource/meta-cell";
import { ResourceClock } from "./resource/clock";
import { ResourceOutbox } from "./resource/outbox";
import { Billing } from "./resource/billing";
import { ResourceWork } from "./resource/work";
import { ResourceLifecycle } from "./resource/lifecycle";
import { migrateTables, tableLists } from "./resource/migrations";
import { advanceClockOffset } from "./resource/test-clock";
import { dryRun } from "./resource/transactions";
import { checkedFaults } from "./resource/test-faults";
import { ResourceInSandbox } from "./resource/in-sandbox";
import { refuseOutsideMoney } from "./resource/sandbox-clock";
import type { SandboxStep } from "../src/rpc/sandbox";

/**
 * Refuses (in the transaction, so it rolls back uncharged) an answer that is not the one the caller already acted on.
 */
function expected(out: Json, expect: OpInput["expect"]): Json {
  if (!expect) return out;
  const got = out as Record<string, Json>;
  const moved = Object.keys(expect).find((k) => got?.[k] !== expect[k]);
  if (moved)
    throw new AppError(
      "conflict",
      "The content changed during the call (it was replaced or deleted); nothing was charged. Retry.",
      { extra: { changed: moved } },
    );
  return out;
}

export class ResourceObject extends DurableObject<Env> implements ResourceApi {
  private readonly meta: MetaCell;
  /** The resource's clock (ahead of the real one only in tests and sandboxes) and its alarm. */
  private readonly clock: ResourceClock;
  /** Deliveries and R2 deletes that committed work obliges. */
  private readonly outbox: ResourceOutbox;
  private readonly work: ResourceWork;
  private readonly lifecycle: ResourceLifecycle;
  /** Its side of a sandbox, when it is in one (resource/in-sandbox.ts). */
  private readonly sandbox: ResourceInSandbox;
  /** Made on first use: it needs the resource's id. */
  private billingOf: Billing | undefined;
  /**
   * Test-only faults (injectFaults, ENVIRONMENT=test; resource/test-faults.ts), in memory as the process they stand
   * for.
   */
  private readonly faults: ResourceFaults = {};

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const armAlarm = () => this.armAlarm();
    const billing = () => this.billing();
    this.meta = new MetaCell(ctx.storage.sql, () => this.clock.now());
    this.clock = new ResourceClock(ctx.storage);
    this.outbox = new ResourceOutbox(ctx.storage, env, this.clock, () => this.meta.get()!.id, this.faults);
    this.work = new ResourceWork(ctx.storage, env, this.meta, this.clock, this.outbox, billing, this.faults, armAlarm);
    this.lifecycle = new ResourceLifecycle(
      ctx,
      env,
      this.meta,
      this.clock,
      this.outbox,
      this.work,
      billing,
      () => (this.billingOf = undefined),
      this.faults,
      armAlarm,
    );
    this.sandbox = new ResourceInSandbox(
      ctx.storage,
      env,
      this.meta,
      this.clock,
      this.work,
      this.lifecycle,
      () => this.alarm(),
      armAlarm,
    );
    // Tables made by older code are brought up to date before anything is served. First the kind's module
    // and AES are loaded: what follows reaches them synchronously, inside transactions (resources/kinds.ts
    // requireKind, auth/sealing-loader.ts).
    ctx
      .blockConcurrencyWhile(async () => {
        await loadSealing();
        const meta = this.meta.get();
        if (meta) await loadKind(meta.kind);
        this.migrate();
        await this.clock.load();
      })
      .catch((err) => console.error("resource object did not start", err));
  }

  /** Runs the migrations this resource has not run yet (see resource/migrations.ts). */
  private migrate(): void {
    const meta = this.meta.get();
    if (!meta) return;
    this.ctx.storage.transactionSync(() => {
      const config = migrateTables(
        this.ctx.storage.sql,
        tableLists(requireKind(meta.kind)),
        JSON.parse(meta.config) as JsonObject,
      );
      if (config) this.meta.update({ config: JSON.stringify(config) });
    });
    this.meta.forget(); // read again: a migration may have added columns
  }

  private billing(): Billing {
    this.billingOf ??= new Billing(
      this.ctx.storage.sql,
      this.env,
      this.meta.get()!.id,
      (captured) => {
        if (captured) this.meta.update({ charged: this.meta.get()!.charged + captured });
      },
      () => this.clock.now(),
      () => this.clock.sandboxId,
    );
    return this.billingOf;
  }

  /**
   * When the alarm must next run, on the resource's clock: the resource's life, a settlement, the outbox or the kind's
   * timer.
   */
  private nextAlarmAt(): number | null {
    const meta = this.meta.get();
    const next = [this.lifecycle.nextDueAt()];
    if (meta) {
      const now = this.clock.now();
      next.push(
        this.billing().nextFlushAt(),
        this.outbox.nextDueAt(),
        nextTimerAt(meta, this.meta.config(meta), this.ctx.storage.sql, this.env, now),
      );
    }
    const at = Math.min(...next.map((t) => t ?? Infinity));
    return at === Infinity ? null : at;
  }

  private async armAlarm(): Promise<void> {
    const at = this.nextAlarmAt();
    if (at !== null) await this.clock.alarmAt(at);
  }

  create(input: CreateInput): Promise<Result<RecordCore>> {
    return this.lifecycle.create(input);
  }

  /** The worker settled the x402 payment of this resource's create: it is paid for, and stays. */
  settledCreate(requestId: string): Promise<Result<null>> {
    return this.lifecycle.settledCreate(requestId);
  }

  /** Its sandbox moves the clock of a sandbox's resource and runs what fell due (resource/in-sandbox.ts). */
  sandboxStep(input: { sandboxId: string; offsetMs: number; maxRuns: number }): Promise<SandboxStep> {
    return this.sandbox.sandboxStep(input);
  }

  /** Its sandbox ended: the resource ends with it. */
  sandboxEnd(sandboxId: string): Promise<boolean> {
    return this.sandbox.sandboxEnd(sandboxId);
  }

  /** Moves expires_at by `ttlSeconds`, charging `priceMicro` (the worker priced it from the registry). */
  extend(input: {
    mgmtHash: string;
    ttlSeconds: number;
    priceMicro: number;
    payer: Payer;
    requestId: string;
  }): Promise<Result<RecordCore>> {
    return this.lifecycle.extend(input);
  }

  status(mgmtHash: string): Promise<Result<RecordCore>> {
    return capture(() => this.work.record(this.meta.authorize(mgmtHash, { name: "get_resource" }), "active"));
  }

  exportAll(mgmtHash: string): Promise<Result<{ resource: RecordCore; data: Json }>> {
    return capture(() => {
      const meta = this.meta.authorize(mgmtHash, { name: "export_resource" });
      const kind = requireKind(meta.kind);
      return {
        resource: this.work.record(meta, "active"),
        data: kind.exportData(this.work.store(meta), this.meta.config(meta)),
      };
    });
  }

  cancel(mgmtHash: string): Promise<Result<RecordCore>> {
    return capture(async () =>
      this.lifecycle.end(this.meta.authorize(mgmtHash, { name: "cancel_resource" }), "cancelled"),
    );
  }

  /** `body`: the raw request bytes of a rawBody operation, streamed through. */
  op(input: OpInput, body: ReadableStream<Uint8Array> | null = null): Promise<Result<Json>> {
    return capture(async () => {
      const op = requireKind(input.kind).ops.find((o) => o.name === input.op);
      if (!op) throw new AppError("not_found", `Unknown operation ${input.op}.`);
      const { meta, grant } = this.meta.authorizeKind(input.mgmtHash, input.kind, {
        name: op.name,
        op,
        input: input.input,
      });
      // A narrowed token's paid calls: counted with the work; once spent, refused before a prepare step works for
      // nothing.
      const counted = grant && input.priceMicro > 0 && !input.peek ? grant : null;
      if (counted && op.prepare) this.meta.grants.checkPaidCall(counted);
      refuseOutsideMoney(this.clock.sandboxId, input.payer, input.priceMicro);
      const config = this.meta.config(meta);
      if (input.peek) {
        if (op.prepare) throw new Error(`${meta.kind}.${op.name}: an operation with a prepare step cannot be peeked`);
        return dryRun(this.ctx.storage, () =>
          op.run(this.work.store(meta, this.clock.now(), afterCommit()), config, input.input, undefined),
        );
      }
      if (op.ready)
        await this.work.waitUntil(
          meta,
          (store) => op.ready!(store, config, input.input),
          (input.input as { wait_seconds?: number }).wait_seconds ?? 0,
        );
      // A call that cannot be paid is refused before its prepare step does work it would then have to undo.
      if (op.prepare && input.priceMicro && input.payer.type !== "prepaid")
        await this.billing().reserve(input.payer, input.priceMicro);
      return this.work.prepared(
        meta,
        op.prepare && ((ctx) => op.prepare!(ctx, config, input.input, body)),
        op.discard,
        async (prepared) => {
          const price = input.priceMicro;
          const pending = afterCommit();
          const run = (current: MetaRow) => {
            if (counted) this.meta.grants.countPaidCall(counted);
            return expected(
              op.run(this.work.store(current, this.clock.now(), pending), config, input.input, prepared),
              input.expect,
            );
          };
          const payer = input.payer;
          if (payer.type === "prepaid" || price === 0) {
            // Paid by x402 in the worker (or free). No await between the work and the total: they commit together.
            const out = this.ctx.storage.transactionSync(() => run(meta));
            if (price) this.meta.update({ charged: this.meta.get()!.charged + price });
            await this.work.afterWork(meta, pending);
            return out;
          }
          const out = await this.billing().spend(
            this.ctx.storage,
            payer,
            price,
            { operation: `${meta.kind}.${op.name}`, requestId: input.requestId },
            () => run(this.meta.stillHere()),
            async () => {
              Object.assign(pending, afterCommit()); // the dry run before a hold sends and drops nothing
              await this.armAlarm();
              this.meta.stillHere();
            },
          );
          await this.work.afterWork(meta, pending);
          return out;
        },
      );
    });
  }

  /**
   * A request to the resource's public address: free, no credentials. The worker found this object
   * from the public id and matched the kind's route; the whole id must be this resource's.
   */
  publicRequest(input: PublicInput): Promise<Result<PublicAnswer>> {
    return capture(async () => {
      const meta = this.meta.get();
      const face = meta && requireKind(meta.kind).public;
      if (!meta || !face || !meta.public_id || !digestsEqual(meta.public_id, input.publicId) || meta.public_disabled) {
        throw new AppError("not_found", "Nothing is served at this address.", { resourceMissing: !meta });
      }
      const ending = this.meta.endingState(meta) ?? (this.clock.now() >= meta.expires_at ? "expired" : null);
      if (ending)
        throw new AppError(
          ending === "expired" ? "resource_expired" : "resource_cancelled",
          `The resource behind this address ${ending === "expired" ? "has expired" : "was cancelled"}.`,
        );
      const config = this.meta.config(meta);
      const once = () =>
        this.work.prepared(
          meta,
          face.prepare && ((ctx) => face.prepare!(ctx, config, input.request)),
          face.discard && ((ctx, p) => face.discard!(ctx, config, p)),
          (prepared) => this.work.commit(meta, (store) => face.handle(store, config, input.request, prepared)),
        );
      let handled: unknown;
      for (let attempt = 1; ; attempt++) {
        try {
          handled = await once();
          break;
        } catch (err) {
          if (!(err instanceof PreparedStale)) throw err;
          if (attempt >= PREPARE_ATTEMPTS)
            throw new AppError(
              "conflict",
              "The resource changed while this request was prepared, each time it was tried; send it again.",
            );
        }
      }
      const answer = face.finish
        ? await face.finish(this.work.prepareContext(meta), config, input.request, handled)
        : (handled as PublicAnswer);
      // Reused no later than the resource's end (in the worker's time: a test clock runs ahead of it).
      return answer.reuse
        ? { ...answer, reuse: { ...answer.reuse, until: Date.now() + (meta.expires_at - this.clock.now()) } }
        : answer;
    });
  }

  publicSettled(input: PublicSettled): Promise<Result<null>> {
    return capture(async () => {
      const meta = this.meta.get();
      const settled = meta && requireKind(meta.kind).public?.settled;
      if (
        !meta ||
        !settled ||
        this.meta.endingState(meta) ||
        !meta.public_id ||
        !digestsEqual(meta.public_id, input.publicId)
      )
        return null;
      await this.work.commit(meta, (store) =>
        settled(store, this.meta.config(meta), input.report, { status: input.status, durationMs: input.durationMs }),
      );
      return null;
    });
  }

  /**
   * A message another resource relayed here: the kind takes it in a transaction (once per relay id); an ended resource
   * takes nothing.
   */
  relay(input: RelayInput): Promise<Result<null>> {
    return capture(async () => {
      const meta = this.meta.get();
      const relay = meta && requireKind(meta.kind).relay;
      if (!meta || !relay || this.meta.endingState(meta) || this.clock.now() >= meta.expires_at) {
        throw new AppError(
          "not_found",
          meta && !relay ? `A ${meta.kind} resource takes no relayed messages.` : "The resource has ended.",
        );
      }
      await this.work.commit(meta, (store) =>
        relay(store, this.meta.config(meta), JSON.parse(input.body) as Json, input.deliveryId, input.from),
      );
      return null;
    });
  }

  /**
   * What this resource shares with another of its owner's (a link serving a blob's bytes); an ended one shares nothing.
   */
  sharedObject(): Promise<Result<{ key: string } | null>> {
    return capture(() => {
      const meta = this.meta.get();
      const shared = meta && requireKind(meta.kind).shared;
      if (!meta || !shared || this.meta.endingState(meta) || this.clock.now() >= meta.expires_at) return null;
      return shared(this.work.store(meta), this.meta.config(meta));
    });
  }

  /**
   * Takes bytes another of its owner's resources wrote below this one's prefix (a transfer's copy) as its own content.
   */
  adoptObject(input: AdoptedObject): Promise<Result<null>> {
    return capture(async () => {
      const meta = this.meta.get();
      const adopt = meta && requireKind(meta.kind).adopt;
      if (!meta || !adopt || this.meta.endingState(meta) || this.clock.now() >= meta.expires_at) {
        throw new AppError(
          "not_found",
          meta && !adopt ? `A ${meta.kind} resource takes no content from other resources.` : "The resource has ended.",
        );
      }
      if (!input.key.startsWith(`${meta.id}/`))
        throw new AppError("forbidden", "The content is not below this resource's prefix.");
      await this.work.commit(meta, (store) => adopt(store, this.meta.config(meta), input));
      return null;
    });
  }

  /** The operator disabled (or enabled again) this resource's public address: mirrored here, so no hit reads D1. */
  setPublicDisabled(input: { publicId: string; disabled: boolean }): Promise<Result<boolean>> {
    return capture(() => {
      const meta = this.meta.get();
      if (!meta || meta.public_id !== input.publicId) return false;
      this.meta.update({ public_disabled: input.disabled ? 1 : 0 });
      return true;
    });
  }

  /** The account asks for its held money back (to report an exact balance, or because it ran short). */
  flushBilling(): Promise<Result<null>> {
    return capture(async () => {
      if (this.meta.get()) await this.billing().flush("all");
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
    const run = this.alarmRunning.then(() => this.sandbox.alarmInSandbox(() => this.runAlarm()));
    this.alarmRunning = run.catch(() => undefined);
    return run;
  }

  private alarmRunning: Promise<void> = Promise.resolve();

  private async runAlarm(): Promise<void> {
    this.clock.alarmCleared();
    if (await this.lifecycle.recoverCharges()) return;
    try {
      const meta = this.meta.get();
      if (!meta) return await this.armAlarm(); // a creation still running here keeps its backstop
      if (meta.ended || this.clock.now() >= meta.expires_at) {
        await this.lifecycle.end(meta, meta.ended ?? "expired"); // an end that failed part-way resumes here
        return;
      }
      await this.billing().flush("due");
      await this.work.finishOutbox(meta);
      // Read again: an extend may have moved expires_at while settlement waited.
      await this.lifecycle.sendDueNotices(this.meta.get()!);
      await this.work.fireDueTimer();
      await this.armAlarm();
    } catch (err) {
      // The platform gives up on an alarm after a few failed runs; expiry must not be lost, so re-arm.
      console.error("resource alarm failed; trying again in a minute", err);
      if (this.meta.get()) await this.clock.alarmAt(this.clock.now() + 60_000);
    }
  }

  /**
   * Test only (ENVIRONMENT=test): moves this resource's clock `ms` ahead and answers its now. What
   * is due by then runs here, before this answers, as the alarm would run it (`runDue` false leaves
   * it to the alarm, armed for now); the alarm is never left in the past for the runtime to race.
   */
  async advanceClock(ms: number, runDue = true): Promise<number> {
    this.clock.offset = advanceClockOffset(this.env, this.ctx.storage.sql, ms);
    for (let run = 0; runDue && run < 50 && (this.nextAlarmAt() ?? Infinity) <= this.clock.now(); run++)
      await this.alarm();
    await this.armAlarm();
    return this.clock.now();
  }

  /** The consumer of the DELIVERIES queue reports each attempt here (nothing to do once the resource is gone). */
  /** Answers whether the reporting message should go on retrying. */
  async recordDelivery(report: DeliveryReport): Promise<boolean> {
    const goOn = await this.work.settleDelivery(report);
    await this.sandbox.attemptReported(report); // a sandbox's timeline shows each attempt
    return goOn;
  }

  mintToken(input: MintTokenInput): Promise<Result<TokenView>> {
    return capture(() => {
      const { meta, grant } = this.meta.authorizeCall(input.mgmtHash, { name: "tokens" });
      return this.meta.grants.mint(grant, requireKind(meta.kind), input, this.clock.now(), meta.expires_at);
    });
  }

  listTokens(input: {
    mgmtHash: string;
    limit: number;
    cursor: string | null;
  }): Promise<Result<{ items: TokenView[]; next_cursor: string | null }>> {
    return capture(() =>
      this.meta.grants.list(
        this.meta.authorizeCall(input.mgmtHash, { name: "tokens" }).grant?.tokenId ?? null,
        input.limit,
        input.cursor,
      ),
    );
  }

  revokeToken(input: { mgmtHash: string; tokenId: string }): Promise<Result<{ token_id: string; revoked: string[] }>> {
    return capture(() => {
      const { grant } = this.meta.authorizeCall(input.mgmtHash, { name: "tokens" });
      return {
        token_id: input.tokenId,
        revoked: this.meta.grants.revoke(grant?.tokenId ?? null, input.tokenId, this.clock.now()),
      };
    });
  }

  /** Test only (ENVIRONMENT=test): faults in this resource's object (resource/test-faults.ts). */
  injectFaults(faults: ResourceFaults): void {
    Object.assign(this.faults, checkedFaults(this.env, faults));
  }

  listDeliveries(input: {
    mgmtHash: string;
    kind: string;
    limit: number;
    cursor: string | null;
  }): Promise<Result<{ items: Json[]; next_cursor: string | null }>> {
    return capture(() => {
      this.meta.authorizeKind(input.mgmtHash, input.kind, { name: "list_deliveries" });
      return this.outbox.deliveries.list(input.limit, input.cursor);
    });
  }

  retryDelivery(input: { mgmtHash: string; kind: string; deliveryId: string }): Promise<Result<Json>> {
    return capture(() =>
      this.retryDeliveryOf(
        this.meta.authorizeKind(input.mgmtHash, input.kind, { name: "retry_delivery" }).meta,
        input.deliveryId,
      ),
    );
  }

  /** The operator sends a dead delivery again (after an outage of its own), without the owner's token. */
  operatorRetryDelivery(deliveryId: string): Promise<Result<Json>> {
    return capture(() => this.retryDeliveryOf(this.meta.stillHere(), deliveryId));
  }

  private async retryDeliveryOf(meta: MetaRow, deliveryId: string): Promise<Json> {
    if (!meta.signing_secret) throw new AppError("not_found", "This resource sends no events.");
    const { view, dead } = await this.outbox.deliveries.retry(deliveryId, meta.signing_secret);
    for (const report of dead) await this.work.settleDelivery(report);
    return view;
  }
}
