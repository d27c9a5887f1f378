/**
 * One per resource: the kind's state in SQLite, the alarm for TTL expiry and
 * billing settlement, and the data-plane dispatch to the kind's engine.
 * Data-plane calls paid with a credit token are charged here, against a hold
 * (resource/billing.ts), in the same transaction as the work: a refused or
 * failed call never reaches the ledger.
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../src/env";
import { AppError, capture, type Result } from "../src/http/errors";
import { digestsEqual } from "../src/auth/ids";
import { requireKind } from "../src/resources/registry";
import type { EngineStore } from "../src/resources/kind";
import { dueTimer, engineStore, nextTimerAt, type Outbox } from "./resource/engine-store";
import type { Json } from "../src/json";
import type { Payer } from "../src/money/payment";
import { deletePrefix } from "../src/resources/r2";
import { endResourceIndex, insertResourceIndex, updateResourceExpiry } from "../src/resources/index-table";
import type { CreateInput, OpInput } from "./resource/rpc-types";
import { META_TABLE, recordOf, type MetaRow, type RecordCore, type ResourceState } from "./resource/meta";
import { BILLING_TABLES, Billing, chargeNow, refundCharge } from "./resource/billing";
import { DELIVERY_TABLES, DeliveryLog, type DeliveryReport } from "./resource/deliveries";
import { nextNoticeAt, noticesStillSent, sendDueNotices } from "./resource/lifecycle-notices";

export type { CreateInput, OpInput };

export class ResourceObject extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  /** The meta row, read once per object lifetime: undefined = not read yet, null = no resource here. */
  private cached: MetaRow | null | undefined;
  private billingOf: Billing | undefined;
  private deliveriesOf: DeliveryLog | undefined;
  /** Set while end() deletes the resource: no operation may start (and charge) in that window. */
  private ending: Exclude<ResourceState, "active"> | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
  }

  create(input: CreateInput): Promise<Result<RecordCore>> {
    return capture(async () => {
      if (this.meta()) throw new AppError("conflict", "This resource already exists.");
      const kind = requireKind(input.kind);
      const now = Date.now();
      const meta: MetaRow = {
        id: input.id, kind: input.kind, owner: input.owner, mgmt_hash: input.mgmtHash, label: input.label,
        notify_url: input.notifyUrl, config: input.configJson, created_at: now,
        expires_at: now + input.ttlSeconds * 1000, charged: input.priceMicro, signing_secret: input.sealedSecret, notices_sent: 0,
      };
      const chargeId = await chargeNow(this.env, input.payer, input.priceMicro, `${input.kind}.create`, input.id, input.requestId);
      try {
        this.ctx.storage.transactionSync(() => {
          for (const ddl of [META_TABLE, ...BILLING_TABLES, ...DELIVERY_TABLES]) this.sql.exec(ddl);
          this.sql.exec(
            "INSERT INTO resource_meta VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)",
            meta.id, meta.kind, meta.owner, meta.mgmt_hash, meta.label, meta.notify_url, meta.config, meta.created_at, meta.expires_at, meta.charged, meta.signing_secret,
          );
          kind.init(this.store(meta, now), JSON.parse(input.configJson));
        });
        this.cached = meta;
        await insertResourceIndex(this.env.DB, meta);
        await this.armAlarm();
      } catch (err) {
        this.cached = null;
        await this.ctx.storage.deleteAll();
        await refundCharge(this.env, input.payer, chargeId, input.requestId);
        throw err;
      }
      return this.record(meta, "active");
    });
  }

  status(mgmtHash: string): Promise<Result<RecordCore>> {
    return capture(() => this.record(this.authorize(mgmtHash), "active"));
  }

  /** Moves expires_at by `ttlSeconds`, charging `priceMicro` (the worker priced it from the registry). */
  extend(input: { mgmtHash: string; ttlSeconds: number; priceMicro: number; payer: Payer; requestId: string }): Promise<Result<RecordCore>> {
    return capture(async () => {
      const meta = this.authorize(input.mgmtHash);
      const kind = requireKind(meta.kind);
      const limit = Date.now() + kind.maxTtlSeconds * 1000;
      if (meta.expires_at + input.ttlSeconds * 1000 > limit) {
        const most = Math.max(0, Math.floor((limit - meta.expires_at) / 1000));
        throw new AppError("validation_failed", `A ${meta.kind} lives at most ${kind.maxTtlSeconds} s from now; it can be extended by ${most} s at most.`, {
          errors: [{ path: "ttl_seconds", message: `must be at most ${most}` }],
        });
      }
      const chargeId = await chargeNow(this.env, input.payer, input.priceMicro, `${meta.kind}.extend`, meta.id, input.requestId);
      const current = this.meta();
      if (!current || this.ending) {
        await refundCharge(this.env, input.payer, chargeId, input.requestId);
        throw new AppError("not_found", "The resource ended while it was being extended.");
      }
      const moved = { ...current, expires_at: current.expires_at + input.ttlSeconds * 1000, charged: current.charged + input.priceMicro };
      this.updateMeta({ expires_at: moved.expires_at, charged: moved.charged, notices_sent: noticesStillSent(moved, Date.now()) });
      await this.armAlarm();
      await updateResourceExpiry(this.env.DB, meta.id, moved.expires_at);
      return this.record(this.meta()!, "active");
    });
  }

  exportAll(mgmtHash: string): Promise<Result<{ resource: RecordCore; data: Json }>> {
    return capture(() => {
      const meta = this.authorize(mgmtHash);
      const kind = requireKind(meta.kind);
      return { resource: this.record(meta, "active"), data: kind.exportData(this.store(meta), JSON.parse(meta.config)) };
    });
  }

  cancel(mgmtHash: string): Promise<Result<RecordCore>> {
    return capture(async () => this.end(this.authorize(mgmtHash), "cancelled"));
  }

  op(input: OpInput): Promise<Result<Json>> {
    return capture(async () => {
      const meta = this.authorize(input.mgmtHash);
      if (meta.kind !== input.kind) throw new AppError("not_found", `${meta.id} is not a ${input.kind} resource.`);
      const op = requireKind(meta.kind).ops.find((o) => o.name === input.op);
      if (!op) throw new AppError("not_found", `Unknown operation ${input.op}.`);
      const config = JSON.parse(meta.config) as unknown;
      const price = input.priceMicro;
      const outbox: Outbox = [];
      const run = () => op.run(this.store(meta, Date.now(), outbox), config, input.input);
      const payer = input.payer;
      if (payer.type === "prepaid" || price === 0) {
        // Paid by x402 in the worker (or free). No await between the work and the total: they commit together.
        const out = this.ctx.storage.transactionSync(run);
        if (price) this.updateMeta({ charged: this.cached!.charged + price });
        await this.afterWork(meta, outbox);
        return out;
      }

      const out = await this.billing().spend(this.ctx.storage, payer, price, { operation: `${meta.kind}.${op.name}`, requestId: input.requestId }, run, async () => {
        outbox.length = 0; // the dry run before a hold sends nothing
        await this.armAlarm();
        if (!this.meta()) throw new AppError("not_found", "The resource ended during the operation.");
      });
      await this.afterWork(meta, outbox);
      return out;
    });
  }

  /** The account asks for its held money back (to report an exact balance, or because it ran short). */
  flushBilling(): Promise<Result<null>> {
    return capture(async () => {
      if (this.meta()) await this.billing().flush("all");
      return null;
    });
  }

  /** TTL expiry and due settlements. The runtime retries the alarm if this throws, so neither is skipped. */
  override async alarm(): Promise<void> {
    try {
      const meta = this.meta();
      if (!meta) return;
      if (Date.now() >= meta.expires_at) {
        await this.end(meta, "expired");
        return;
      }
      await this.billing().flush("due");
      // Read again: an extend may have moved expires_at while settlement waited.
      await this.sendDueNotices(this.meta()!);
      // The kind's own timer (a wakeup's moment, a schedule's next tick), when due.
      const due = dueTimer(this.meta()!, this.sql, this.env, Date.now());
      if (due) {
        this.ctx.storage.transactionSync(due.run);
        await this.sendOutbox(meta, due.outbox);
      }
      await this.armAlarm();
    } catch (err) {
      // The platform gives up on an alarm after a few failed runs; expiry must not be lost, so re-arm.
      console.error("resource alarm failed; trying again in a minute", err);
      if (this.meta()) await this.ctx.storage.setAlarm(Date.now() + 60_000);
    }
  }

  /** The consumer of the DELIVERIES queue reports each attempt here (nothing to do once the resource is gone). */
  async recordDelivery(report: DeliveryReport): Promise<void> {
    const meta = this.meta();
    if (!meta) return;
    this.deliveries().record(report);
    const finished = requireKind(meta.kind).onDeliveryFinished;
    const final = report.final;
    if (final && finished) this.ctx.storage.transactionSync(() => finished(this.store(meta), JSON.parse(meta.config), report.deliveryId, final));
  }

  listDeliveries(input: { mgmtHash: string; limit: number; cursor: string | null }): Promise<Result<{ items: Json[]; next_cursor: string | null }>> {
    return capture(() => {
      this.authorize(input.mgmtHash);
      return this.deliveries().list(input.limit, input.cursor);
    });
  }

  retryDelivery(input: { mgmtHash: string; deliveryId: string }): Promise<Result<Json>> {
    return capture(async () => {
      const meta = this.authorize(input.mgmtHash);
      if (!meta.signing_secret) throw new AppError("not_found", "This resource sends no events.");
      return this.deliveries().retry(input.deliveryId, meta.signing_secret);
    });
  }

  // ---- internals ----

  /** Settles billing, then deletes every byte the resource held (R2 prefix, all storage), leaving the D1 tombstone. */
  private async end(meta: MetaRow, state: Exclude<ResourceState, "active">): Promise<RecordCore> {
    this.ending = state;
    try {
      await this.billing().flush("all");
    } catch (err) {
      this.ending = null; // money not settled: keep the resource, so settlement can be retried
      throw err;
    }
    const record = this.record(this.meta() ?? meta, state);
    const at = new Date().toISOString();
    // The event must not hold back the deletion it announces.
    await this.emit(meta, `resource.${state}`, state === "expired" ? { expired_at: at } : { cancelled_at: at }, String(meta.expires_at))
      .catch((err) => console.error(`lifecycle event of ${meta.id} not sent`, err));
    await deletePrefix(this.env.BUCKET, `${meta.id}/`);
    await endResourceIndex(this.env.DB, meta.id, state, Date.now());
    this.cached = null;
    this.billingOf = undefined;
    this.deliveriesOf = undefined;
    this.ending = null;
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    return record;
  }

  private async armAlarm(): Promise<void> {
    const meta = this.meta();
    if (!meta) return;
    const next = [meta.expires_at, this.billing().nextFlushAt(), nextNoticeAt(meta), nextTimerAt(meta, this.sql, this.env)];
    await this.ctx.storage.setAlarm(Math.min(...next.map((t) => t ?? Infinity)));
  }

  /** Writes meta columns and keeps the cached row in step. */
  private updateMeta(changes: Partial<MetaRow>): void {
    const columns = Object.keys(changes);
    this.sql.exec(`UPDATE resource_meta SET ${columns.map((c) => `${c} = ?`).join(", ")}`, ...Object.values(changes));
    this.cached = { ...this.cached!, ...changes };
  }

  private meta(): MetaRow | null {
    if (this.cached !== undefined) return this.cached;
    const exists = this.sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'resource_meta'").toArray().length > 0;
    this.cached = exists ? (this.sql.exec<MetaRow>("SELECT * FROM resource_meta").toArray()[0] ?? null) : null;
    return this.cached;
  }

  private deliveries(): DeliveryLog {
    this.deliveriesOf ??= new DeliveryLog(this.sql, this.env, this.meta()!.id);
    return this.deliveriesOf;
  }

  /** Sends a lifecycle event to notify_url, when the resource has one. */
  private async emit(meta: MetaRow, type: string, data: Record<string, unknown>, uniqueBy: string): Promise<void> {
    if (meta.notify_url && meta.signing_secret) await this.deliveries().emit({ url: meta.notify_url, sealedSecret: meta.signing_secret }, type, data, uniqueBy);
  }

  private async sendDueNotices(meta: MetaRow): Promise<void> {
    const sent = await sendDueNotices(meta, Date.now(), (type, data) => this.emit(meta, type, data, `${meta.expires_at}:${String(data.hours_left)}`));
    if (sent !== meta.notices_sent) this.updateMeta({ notices_sent: sent });
  }

  private billing(): Billing {
    this.billingOf ??= new Billing(this.sql, this.env, this.meta()!.id, (captured) => {
      if (captured) this.updateMeta({ charged: this.cached!.charged + captured });
    });
    return this.billingOf;
  }

  /** Not found here means never created or already ended: the worker then consults the D1 tombstone. */
  private authorize(mgmtHash: string): MetaRow {
    const meta = this.meta();
    if (!meta) throw new AppError("not_found", "No such resource.");
    if (this.ending) throw new AppError(this.ending === "expired" ? "resource_expired" : "resource_cancelled", `This resource is being ${this.ending === "expired" ? "expired" : "cancelled"}; its data is being deleted.`);
    if (!digestsEqual(meta.mgmt_hash, mgmtHash)) throw new AppError("unauthorized", "The management token is not valid for this resource.");
    return meta;
  }

  private store(meta: MetaRow, now = Date.now(), outbox?: Outbox): EngineStore {
    return engineStore(meta, this.sql, this.env, now, outbox);
  }

  /** After committed work: send what it queued, and follow its timer if it moved one. */
  private async afterWork(meta: MetaRow, outbox: Outbox): Promise<void> {
    await this.sendOutbox(meta, outbox);
    if (requireKind(meta.kind).timer) await this.armAlarm();
  }

  private async sendOutbox(meta: MetaRow, outbox: Outbox): Promise<void> {
    for (const { id, request } of outbox) await this.deliveries().send(id, request, meta.signing_secret!);
  }

  private record(meta: MetaRow, state: ResourceState): RecordCore {
    return recordOf(meta, state, this.store(meta), this.billing().unsettled());
  }
}
