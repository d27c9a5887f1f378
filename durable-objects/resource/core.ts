/**
 * The internals every ResourceObject RPC shares: the cached meta row, billing and
 * delivery logs, authorization, the alarm, transactions with their after-commit
 * work. lifecycle.ts adds create, extend and end; ResourceObject.ts the RPCs on the data.
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../src/env";
import { AppError } from "../../src/http/errors";
import { digestsEqual } from "../../src/auth/ids";
import { requireKind } from "../../src/resources/registry";
import type { EngineStore, PrepareContext } from "../../src/resources/kind";
import { afterCommit, dueTimer, engineStore, nextTimerAt, prepareContext, type AfterCommit } from "./engine-store";
import { readMeta, recordOf, type MetaRow, type RecordCore, type ResourceState } from "./meta";
import { Billing } from "./billing";
import { ResourceOutbox } from "./outbox";
import type { DeliveryReport, ResourceFaults } from "../../src/rpc/resource";
import { nextNoticeAt, sendDueNotices } from "./lifecycle-notices";
import { migrateTables, tableLists } from "./migrations";
import { ResourceClock } from "./clock";
import type { JsonObject } from "../../src/json";

/**
 * Long-polls that wait on one resource at once. The runtime allows an object 10,000 active timers, shared
 * by everything it does (group commit, fetch timeouts, long-polls); beyond this a long-poll answers at once.
 */
export const MAX_WAITERS = 1_000;

export class ResourceCore extends DurableObject<Env> {
  protected readonly sql: SqlStorage;
  /** The meta row, read once per object lifetime: undefined = not read yet, null = no resource here. */
  protected cached: MetaRow | null | undefined;
  protected billingOf: Billing | undefined;
  /** Deliveries and R2 deletes that committed work obliges (resource/outbox.ts). */
  protected readonly outbox: ResourceOutbox;
  /** Test-only faults (injectFaults, ENVIRONMENT=test; resource/test-faults.ts), in memory as the process they stand for. */
  protected readonly faults: ResourceFaults = {};
  /** Direct charges running in this process (request id → when the alarm would give them back): not a dead process's to recover. */
  protected readonly charging = new Map<string, number>();
  /** Set while end() deletes the resource: no operation may start (and charge) in that window. */
  protected ending: Exclude<ResourceState, "active"> | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.clock = new ResourceClock(ctx.storage);
    this.outbox = new ResourceOutbox(ctx.storage, env, this.clock, () => this.meta()!.id, this.faults);
    // Tables made by older code are brought up to date before anything is served.
    void ctx.blockConcurrencyWhile(async () => {
      this.migrate();
      await this.clock.load();
    });
  }

  /** The resource's clock (ahead of the real one only in tests) and its alarm (resource/clock.ts). */
  protected readonly clock: ResourceClock;

  /** The resource's now: every time it keeps (expiry, timers, notices) is read against this. */
  protected now(): number {
    return this.clock.now();
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


  /** When the alarm must next run, on the resource's clock: expiry, a settlement, a notice or the kind's timer. */
  protected nextAlarmAt(): number | null {
    // A direct charge running in this process: its pending row's backstop, should the process die.
    const charging = Math.min(...this.charging.values());
    const meta = this.meta();
    if (!meta) return charging === Infinity ? null : charging;
    const next = [
      charging, meta.expires_at, this.billing().nextFlushAt(), nextNoticeAt(meta), this.outbox.nextDueAt(),
      nextTimerAt(meta, this.config(meta), this.sql, this.env, this.now()),
    ];
    return Math.min(...next.map((t) => t ?? Infinity));
  }

  protected async armAlarm(): Promise<void> {
    const at = this.nextAlarmAt();
    if (at !== null) await this.clock.alarmAt(at);
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

  /** Sends a lifecycle event to notify_url, when the resource has one. */
  protected async emit(meta: MetaRow, type: string, data: Record<string, unknown>, uniqueBy: string): Promise<void> {
    if (meta.notify_url && meta.signing_secret) await this.outbox.deliveries.emit(meta.notify_url, meta.signing_secret, type, data, uniqueBy);
  }

  /** The alarm's part of the outbox (resource/outbox.ts); a delivery that died there is settled with the kind. */
  protected async finishOutbox(meta: MetaRow): Promise<void> {
    for (const report of await this.outbox.finishDue(meta.signing_secret)) await this.settleDelivery(report);
  }

  protected async sendDueNotices(meta: MetaRow): Promise<void> {
    const sent = await sendDueNotices(meta, this.now(), (type, data) => this.emit(meta, type, data, `${meta.expires_at}:${String(data.hours_left)}`));
    if (sent !== meta.notices_sent) this.updateMeta({ notices_sent: sent });
  }

  protected billing(): Billing {
    this.billingOf ??= new Billing(this.sql, this.env, this.meta()!.id, (captured) => {
      if (captured) this.updateMeta({ charged: this.cached!.charged + captured });
    }, () => this.now(), () => this.clock.sandboxId);
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
    return engineStore(meta, this.sql, this.env, now, pending && this.outbox.recorder(pending));
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

  /**
   * Waits until `ready` holds or `seconds` pass (docs/api.md#requests-and-conventions caps long-polls at 30 s). Past MAX_WAITERS long-polls
   * on this resource, one answers at once, as a long-poll may: each holds one of the object's timers.
   */
  protected async waitUntil(meta: MetaRow, ready: (store: EngineStore) => boolean, seconds: number): Promise<void> {
    const deadline = Date.now() + Math.min(seconds, 30) * 1000;
    while (!ready(this.store(meta)) && Date.now() < deadline && this.waiters.size < MAX_WAITERS) {
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
      for (const report of await this.outbox.carryOut(pending, meta.signing_secret)) await this.settleDelivery(report);
    } catch (err) {
      console.error(`${meta.id}: outbox left to the alarm`, err);
    }
    // The alarm already set (at the latest, expiry) runs the timer late rather than never.
    if (requireKind(meta.kind).timer) await this.armAlarm().catch((err) => console.error(`${meta.id}: alarm not re-armed`, err));
    for (const wake of this.waiters) wake();
  }

  /**
   * An attempt (or the end) of a delivery, into the log; the end is told to the kind in the same
   * transaction, so what it does next (a stable address's next replay) cannot be lost to a crash
   * between the two. Answers whether the reporting message should go on retrying; once the
   * resource is gone its last events still go out, on the queue's schedule.
   */
  protected async settleDelivery(report: DeliveryReport): Promise<boolean> {
    const meta = this.meta();
    if (!meta) return true;
    const finished = requireKind(meta.kind).onDeliveryFinished;
    const final = report.final;
    const pending = afterCommit();
    const { retry } = this.ctx.storage.transactionSync(() => {
      const logged = this.outbox.deliveries.record(report);
      if (logged.settled && final && finished) finished(this.store(meta, this.now(), pending), this.config(meta), report.deliveryId, final);
      return logged;
    });
    await this.outbox.flushReleased(); // a settled delivery may have let its stored body go
    await this.afterWork(meta, pending);
    return retry;
  }

  protected record(meta: MetaRow, state: ResourceState): RecordCore {
    return recordOf(meta, this.config(meta), state, this.store(meta), this.billing().unsettled());
  }
}
