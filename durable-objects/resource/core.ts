/**
 * The internals every ResourceObject RPC shares: the cached meta row, billing and
 * delivery logs, authorization, the alarm, transactions with their after-commit
 * work, and the end of a resource. ResourceObject.ts holds the RPC surface.
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../src/env";
import { AppError } from "../../src/http/errors";
import { digestsEqual } from "../../src/auth/ids";
import { requireKind } from "../../src/resources/registry";
import type { EngineStore, PrepareContext } from "../../src/resources/kind";
import { deletePrefix } from "../../src/resources/r2";
import { endResourceIndex } from "../../src/resources/index-table";
import { afterCommit, dueTimer, engineStore, nextTimerAt, prepareContext, type AfterCommit, type Outbox } from "./engine-store";
import { readMeta, recordOf, type MetaRow, type RecordCore, type ResourceState } from "./meta";
import { Billing } from "./billing";
import { DeliveryLog, type DeliveryReport } from "./deliveries";
import { R2Drops } from "./r2-drops";
import type { OutboxFaults } from "../../src/rpc/resource";
import { DISPATCH_GRACE_MS } from "../../src/delivery/outbox-policy";
import { nextNoticeAt, sendDueNotices } from "./lifecycle-notices";
import { migrateTables, tableLists } from "./migrations";
import { readClockOffset } from "./test-clock";
import type { JsonObject } from "../../src/json";

export class ResourceCore extends DurableObject<Env> {
  protected readonly sql: SqlStorage;
  /** The meta row, read once per object lifetime: undefined = not read yet, null = no resource here. */
  protected cached: MetaRow | null | undefined;
  protected billingOf: Billing | undefined;
  protected deliveriesOf: DeliveryLog | undefined;
  protected dropsOf: R2Drops | undefined;
  /** Test-only faults in the outbox (injectOutboxFaults, ENVIRONMENT=test). */
  protected readonly faults: OutboxFaults = {};
  /** When the alarm is set for (real time), as far as this process knows; null: none, or not known. */
  private armedAt: number | null = null;
  /** Set while end() deletes the resource: no operation may start (and charge) in that window. */
  protected ending: Exclude<ResourceState, "active"> | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    // Tables made by older code are brought up to date before anything is served.
    void ctx.blockConcurrencyWhile(async () => {
      this.migrate();
      this.clockOffset = readClockOffset(this.sql);
      this.armedAt = await ctx.storage.getAlarm();
    });
  }

  /**
   * How far this resource's clock runs ahead of the real one: 0, except in tests that move it
   * (advanceClock, ENVIRONMENT=test only), so a test sees a day pass without waiting or rewriting tables.
   */
  protected clockOffset = 0;

  /** The resource's now: every time it keeps (expiry, timers, notices) is read against this. */
  protected now(): number {
    return Date.now() + this.clockOffset;
  }

  /** Sets the alarm for a moment of the resource's clock (anything already due fires now: the runtime refuses one at or before the epoch). */
  protected async alarmAt(resourceTime: number): Promise<void> {
    this.armedAt = Math.max(Date.now(), resourceTime - this.clockOffset);
    await this.ctx.storage.setAlarm(this.armedAt);
  }

  /** The runtime clears the alarm as it runs it. */
  protected alarmStarted(): void {
    this.armedAt = null;
  }

  /**
   * Brings the alarm within the outbox's grace when work records a send or an R2 delete. Called
   * inside the transaction and not awaited, so the alarm is written with the rows: a process that
   * dies before carrying them out leaves them to the alarm.
   */
  private armSoon(): void {
    const at = Date.now() + DISPATCH_GRACE_MS;
    if (this.armedAt !== null && this.armedAt <= at) return;
    this.armedAt = at;
    this.ctx.storage.setAlarm(at).catch((err) => console.error("outbox alarm not set", err));
  }

  /** Runs the migrations this resource has not run yet (see resource/migrations.ts). */
  private migrate(): void {
    const meta = this.meta();
    if (!meta) return;
    this.ctx.storage.transactionSync(() => {
      const config = migrateTables(this.sql, tableLists(requireKind(meta.kind)), JSON.parse(meta.config) as JsonObject);
      if (config) this.updateMeta({ config: JSON.stringify(config) });
    });
    this.cached = undefined; // read again: a migration may have added columns
  }


  /** Settles billing, then deletes every byte the resource held (R2 prefix, all storage), leaving the D1 tombstone. */
  protected async end(meta: MetaRow, state: Exclude<ResourceState, "active">): Promise<RecordCore> {
    this.ending = state;
    try {
      await this.billing().flush("all");
    } catch (err) {
      this.ending = null; // money not settled: keep the resource, so settlement can be retried
      throw err;
    }
    // From here the end only deletes: recorded, so a failure part-way is resumed by the alarm, never left half-done.
    if (!this.meta()?.ended) this.updateMeta({ ended: state });
    await this.alarmAt(this.now() + 60_000);
    const record = this.record(this.meta() ?? meta, state);
    const at = new Date().toISOString();
    // The event must not hold back the deletion it announces.
    await this.emit(meta, `resource.${state}`, state === "expired" ? { expired_at: at } : { cancelled_at: at }, String(meta.expires_at))
      .catch((err) => console.error(`lifecycle event of ${meta.id} not sent`, err));
    await requireKind(meta.kind).end?.(this.prepareContext(meta), this.config(meta));
    await deletePrefix(this.env.BUCKET, `${meta.id}/`);
    await endResourceIndex(this.env.DB, meta.id, state, this.now());
    this.cached = null;
    this.billingOf = undefined;
    this.deliveriesOf = undefined;
    this.dropsOf = undefined;
    this.ending = null;
    this.armedAt = null;
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    return record;
  }

  /** When the alarm must next run, on the resource's clock: expiry, a settlement, a notice or the kind's timer. */
  protected nextAlarmAt(): number | null {
    const meta = this.meta();
    if (!meta) return null;
    const next = [
      meta.expires_at, this.billing().nextFlushAt(), nextNoticeAt(meta), this.deliveries().nextDueAt(), this.drops().nextDueAt(),
      nextTimerAt(meta, this.config(meta), this.sql, this.env, this.now()),
    ];
    return Math.min(...next.map((t) => t ?? Infinity));
  }

  protected async armAlarm(): Promise<void> {
    const at = this.nextAlarmAt();
    if (at !== null) await this.alarmAt(at);
  }

  /** Writes meta columns and keeps the cached row in step. */
  protected updateMeta(changes: Partial<MetaRow>): void {
    const columns = Object.keys(changes);
    this.sql.exec(`UPDATE resource_meta SET ${columns.map((c) => `${c} = ?`).join(", ")}`, ...Object.values(changes));
    this.cached = { ...this.cached!, ...changes };
  }

  protected meta(): MetaRow | null {
    if (this.cached === undefined) this.cached = readMeta(this.sql);
    return this.cached;
  }

  /** The kind's config, parsed once per object lifetime (it changes only when a migration rewrites it). */
  private parsedConfig: { text: string; value: unknown } | undefined;

  protected config(meta: MetaRow): unknown {
    if (this.parsedConfig?.text !== meta.config) this.parsedConfig = { text: meta.config, value: JSON.parse(meta.config) };
    return this.parsedConfig.value;
  }

  protected deliveries(): DeliveryLog {
    const clock = { now: () => this.now(), offset: () => this.clockOffset };
    this.deliveriesOf ??= new DeliveryLog(this.sql, this.env, this.meta()!.id, clock, this.drops(), this.faults);
    return this.deliveriesOf;
  }

  protected drops(): R2Drops {
    this.dropsOf ??= new R2Drops(this.sql, this.env.BUCKET, () => this.now(), this.faults);
    return this.dropsOf;
  }

  /** Where a transaction's sends and R2 deletes are recorded, to be carried out after it commits. */
  private outbox(pending: AfterCommit): Outbox {
    return {
      pending,
      send: (id, request) => {
        if (this.deliveries().stage(id, request)) pending.sends.push(id);
        pending.drops.push(...this.deliveries().takeReleased());
        this.armSoon();
      },
      drop: (keys) => {
        this.drops().stage(keys);
        pending.drops.push(...keys);
        this.armSoon();
      },
    };
  }

  /** Sends a lifecycle event to notify_url, when the resource has one. */
  protected async emit(meta: MetaRow, type: string, data: Record<string, unknown>, uniqueBy: string): Promise<void> {
    if (meta.notify_url && meta.signing_secret) await this.deliveries().emit(meta.notify_url, meta.signing_secret, type, data, uniqueBy);
  }

  /**
   * The alarm's part of the outbox: sends what did not reach the queue or was not heard of,
   * trims the log to its retention, makes the R2 deletes left over.
   */
  protected async finishOutbox(meta: MetaRow): Promise<void> {
    if (meta.signing_secret) for (const report of await this.deliveries().dispatchDue(meta.signing_secret)) await this.settleDelivery(report);
    this.ctx.storage.transactionSync(() => this.deliveries().prune());
    await this.drops().flush(this.deliveries().takeReleased());
    await this.drops().flush();
  }

  protected async sendDueNotices(meta: MetaRow): Promise<void> {
    const sent = await sendDueNotices(meta, this.now(), (type, data) => this.emit(meta, type, data, `${meta.expires_at}:${String(data.hours_left)}`));
    if (sent !== meta.notices_sent) this.updateMeta({ notices_sent: sent });
  }

  protected billing(): Billing {
    this.billingOf ??= new Billing(this.sql, this.env, this.meta()!.id, (captured) => {
      if (captured) this.updateMeta({ charged: this.cached!.charged + captured });
    }, () => this.now());
    return this.billingOf;
  }

  /** Not found here means never created or already ended: the worker then consults the D1 tombstone. */
  /** Whether the resource is ending (in this call, or an end that failed part-way and awaits the alarm). */
  protected endingState(meta: MetaRow): MetaRow["ended"] {
    return this.ending ?? meta.ended;
  }

  protected authorize(mgmtHash: string): MetaRow {
    const meta = this.meta();
    if (!meta) throw new AppError("not_found", "No such resource.", { resourceMissing: true });
    const ending = this.endingState(meta);
    if (ending) throw new AppError(ending === "expired" ? "resource_expired" : "resource_cancelled", `This resource is being ${ending === "expired" ? "expired" : "cancelled"}; its data is being deleted.`);
    if (!digestsEqual(meta.mgmt_hash, mgmtHash)) throw new AppError("unauthorized", "The management token is not valid for this resource.");
    return meta;
  }

  /** As authorize, for a route that names the kind (`/v1/{kind}/{id}/…`): another kind's resource is not found there. */
  protected authorizeKind(mgmtHash: string, kind: string): MetaRow {
    const meta = this.authorize(mgmtHash);
    if (meta.kind !== kind) throw new AppError("not_found", `${meta.id} is not a ${kind} resource.`);
    return meta;
  }

  protected store(meta: MetaRow, now = this.now(), pending?: AfterCommit): EngineStore {
    return engineStore(meta, this.sql, this.env, now, pending && this.outbox(pending));
  }

  /** What a kind's asynchronous step sees. */
  protected prepareContext(meta: MetaRow): PrepareContext {
    return prepareContext(meta, this.sql, this.env, this.now(), () => void this.stillHere());
  }

  /** After awaiting, the resource may have ended meanwhile: nothing may be recorded (or charged) then. */
  protected stillHere(): MetaRow {
    const meta = this.meta();
    if (!meta || this.endingState(meta)) throw new AppError("not_found", "The resource ended during the operation.", { resourceMissing: true });
    return meta;
  }

  /**
   * Runs a kind's optional asynchronous step, then `work` with its result; when `work` fails
   * (refused, unpaid, the resource ended meanwhile), `discard` undoes what the step left behind.
   */
  protected async prepared<P, T>(meta: MetaRow, prepare: ((ctx: PrepareContext) => Promise<P>) | undefined, discard: ((ctx: PrepareContext, p: P) => Promise<void>) | undefined, work: (prepared: P | undefined) => Promise<T>): Promise<T> {
    if (!prepare) return work(undefined);
    const ctx = this.prepareContext(meta);
    const value = await prepare(ctx);
    try {
      this.stillHere();
      return await work(value);
    } catch (err) {
      await discard?.(ctx, value).catch((e) => console.error(`${meta.kind}: discarding prepared work failed`, e));
      throw err;
    }
  }

  /** Long-polls waiting for a change: woken after any committed work here, each re-checks its condition. */
  private waiters = new Set<() => void>();

  /** Waits until `ready` holds or `seconds` pass (API.md §3 caps long-polls at 30 s). */
  protected async waitUntil(meta: MetaRow, ready: (store: EngineStore) => boolean, seconds: number): Promise<void> {
    const deadline = Date.now() + Math.min(seconds, 30) * 1000;
    while (!ready(this.store(meta)) && Date.now() < deadline) {
      let wake!: () => void;
      const woken = new Promise<void>((resolve) => (wake = resolve));
      this.waiters.add(wake);
      const timer = setTimeout(wake, deadline - Date.now());
      await woken;
      clearTimeout(timer);
      this.waiters.delete(wake);
      meta = this.stillHere();
    }
  }

  /** Work in one transaction, then what it asked for once committed. */
  protected async commit<T>(meta: MetaRow, work: (store: EngineStore) => T): Promise<T> {
    const pending = afterCommit();
    const out = this.ctx.storage.transactionSync(() => work(this.store(meta, this.now(), pending)));
    await this.afterWork(meta, pending);
    return out;
  }

  /** The kind's own timer (a wakeup's moment, a schedule's tick), when due; its async step may fetch first. */
  protected async fireDueTimer(): Promise<void> {
    const meta = this.meta()!;
    const config = this.config(meta);
    const timer = dueTimer(meta, config, this.sql, this.env, this.now());
    if (!timer) return;
    const ctx = this.prepareContext(meta);
    const prepared = await timer.prepare?.(ctx, config);
    const current = this.meta();
    try {
      // Still due? The resource may have ended, or an operation moved the timer, while the step awaited.
      if (current && !this.endingState(current) && dueTimer(current, config, this.sql, this.env, this.now())) {
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
  protected async afterWork(meta: MetaRow, pending: AfterCommit): Promise<void> {
    try {
      if (pending.sends.length) for (const report of await this.deliveries().dispatch(pending.sends, meta.signing_secret!)) await this.settleDelivery(report);
      if (pending.drops.length) await this.drops().flush(pending.drops);
    } catch (err) {
      console.error(`${meta.id}: outbox left to the alarm`, err);
    }
    // The alarm already set (at the latest, expiry) runs the timer late rather than never.
    if (requireKind(meta.kind).timer) await this.armAlarm().catch((err) => console.error(`${meta.id}: alarm not re-armed`, err));
    for (const wake of this.waiters) wake();
  }

  /**
   * An attempt (or the end) of a delivery, into the log; a final one is told to the kind.
   * Answers whether the reporting message should go on retrying; once the resource is gone its
   * last events still go out, on the queue's schedule.
   */
  protected async settleDelivery(report: DeliveryReport): Promise<boolean> {
    const meta = this.meta();
    if (!meta) return true;
    const goOn = this.deliveries().record(report);
    // A settled delivery may have let its stored body go.
    const released = this.deliveries().takeReleased();
    if (released.length) await this.drops().flush(released);
    const finished = requireKind(meta.kind).onDeliveryFinished;
    const final = report.final;
    if (final && finished) await this.commit(meta, (store) => finished(store, this.config(meta), report.deliveryId, final));
    return goOn;
  }

  protected record(meta: MetaRow, state: ResourceState): RecordCore {
    return recordOf(meta, this.config(meta), state, this.store(meta), this.billing().unsettled());
  }
}
