/**
 * A resource's side of its sandbox (docs/api.md#sandboxes), a part of ResourceObject: the sandbox moves its clock a
 * step at a time, and at each step the resource runs what fell due exactly as its alarm would (the same alarm, on the
 * same code paths), reporting what fired. A sandbox's resource ends with its sandbox.
 *
 * What the sandbox steps to is the simulated work: the kind's timer, the expiring notices, the TTL. The outbox's and
 * billing's own timing (a queued delivery's report window, a hold's settlement) runs in real time or rides along on
 * those steps: stepping to it would chase a deadline that moves with the clock, and fire nothing anyone simulates. A
 * failed delivery's retry is simulated work: it waits for its moment on the resource's clock (resource/deliveries.ts),
 * and the sandbox steps to it. Each attempt of a delivery goes to the timeline when its answer comes in, stamped with
 * that moment on the resource's clock.
 */
import type { Env } from "../../src/env";
import { requireKind } from "../../src/resources/kinds";
import type { Json } from "../../src/json";
import type { SandboxEvent, SandboxStep } from "../../src/rpc/sandbox";
import type { DeliveryReport } from "../../src/rpc/resource";
import { nextTimerAt, dueTimer } from "./engine-store";
import { nextNoticeAt } from "./lifecycle-notices";
import type { ResourceLifecycle } from "./lifecycle";
import type { MetaCell } from "./meta-cell";
import type { ResourceClock } from "./clock";
import type { ResourceWork } from "./work";
import { moveClockOffsetTo } from "./test-clock";
import { orIfMissing } from "./missing-table";
import type { MetaRow } from "./meta";
import { DELIVERY_WAIT_MS } from "../../src/sandbox/limits";
import { sandboxStub } from "../../src/stubs";

type NewDelivery = { seq: number; delivery_id: string; event_type: string; url: string; method: string };

export class ResourceInSandbox {
  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly env: Env,
    private readonly meta: MetaCell,
    private readonly clock: ResourceClock,
    private readonly work: ResourceWork,
    private readonly lifecycle: ResourceLifecycle,
    /** The object's alarm (one run at a time), as the runtime calls it. */
    private readonly alarm: () => Promise<void>,
    private readonly armAlarm: () => Promise<void>,
  ) {}

  private get sql(): SqlStorage {
    return this.storage.sql;
  }

  /**
   * Moves this resource's clock to `offsetMs` ahead of the real one (never back) and runs its due work,
   * at most `maxRuns` alarm runs; answers what fired and when it is next due. A resource not in
   * `sandboxId` (or gone) answers `present: false` and is not touched.
   */
  async sandboxStep(input: { sandboxId: string; offsetMs: number; maxRuns: number }): Promise<SandboxStep> {
    const meta = this.meta.get();
    if (!meta || this.clock.sandboxId !== input.sandboxId)
      return { present: false, now: Date.now() + input.offsetMs, next: null, fired: [] };
    if (input.offsetMs > this.clock.offset) {
      await this.deliveriesAttempted();
      this.clock.offset = moveClockOffsetTo(this.sql, input.offsetMs);
    }
    const fired: SandboxEvent[] = [];
    let runs = 0;
    this.stepping = true;
    try {
      for (; runs < input.maxRuns; runs++) {
        const current = this.meta.get();
        const due = current && this.simulatedDueAt(current);
        if (!current || due === null || due > this.clock.now()) break;
        fired.push(...(await this.observed(current, due, async () => await this.alarm())));
      }
    } finally {
      this.stepping = false;
    }
    // What those runs put on the queue is attempted before the step answers, so its attempts come in at this moment of
    // the clock, and a failure's retry is known before the sandbox picks its next step.
    if (runs) await this.deliveriesAttempted();
    const after = this.meta.get();
    if (after) await this.armAlarm();
    return { present: after !== null, now: this.clock.now(), next: after ? this.simulatedDueAt(after) : null, fired };
  }

  /** Set while the sandbox steps this resource: it reports what fired itself. */
  private stepping = false;

  /**
   * An alarm run of a sandbox's resource in real time (its sandbox's time flows between moves too): what
   * it fired goes to the sandbox's timeline, as a step's does. Nothing here may fail the alarm.
   */
  async alarmInSandbox(run: () => Promise<void>): Promise<void> {
    const meta = this.meta.get();
    const sandboxId = this.clock.sandboxId;
    if (!meta || !sandboxId || this.stepping) return run();
    // Stamped with the moment it was due (the alarm runs a little after), as a step stamps its firings.
    const fired = await this.observed(meta, Math.min(this.clock.now(), this.simulatedDueAt(meta) ?? Infinity), run);
    if (fired.length)
      await sandboxStub(this.env, sandboxId)
        .record({ resourceId: meta.id, events: fired })
        .catch((err) => console.error(`${meta.id}: sandbox timeline not written`, err));
  }

  /**
   * An attempt of one of this resource's deliveries was logged (the queue's consumer reported it): it goes to the
   * sandbox's timeline. One written to the sandbox's delivery log is there already, as `logged`.
   */
  async attemptReported(report: DeliveryReport): Promise<void> {
    const meta = this.meta.get();
    const sandboxId = this.clock.sandboxId;
    const a = report.attempt;
    if (!meta || !sandboxId || !a || a.logged !== undefined) return;
    const row = orIfMissing(
      "deliveries",
      () =>
        this.sql
          .exec<{ attempts: number; status: string; due_at: number | null; queued: number }>(
            "SELECT attempts, status, due_at, queued FROM deliveries WHERE delivery_id = ?",
            report.deliveryId,
          )
          .toArray()[0],
      undefined,
    );
    const retryAt = row && row.status === "retrying" && row.queued === 0 ? row.due_at : null;
    const event: SandboxEvent = {
      at: a.at + this.clock.offset,
      resource_id: meta.id,
      kind: meta.kind,
      type: "attempt",
      detail: {
        delivery_id: report.deliveryId,
        attempt: row?.attempts ?? null,
        outcome: a.outcome,
        status_code: a.statusCode,
        error: a.error,
        status: row?.status ?? null,
        retry_at: retryAt === null ? null : new Date(retryAt).toISOString(),
      },
    };
    await sandboxStub(this.env, sandboxId)
      .record({ resourceId: meta.id, events: [event] })
      .catch((err) => console.error(`${meta.id}: sandbox timeline not written`, err));
  }

  /**
   * Waits, boundedly, until each delivery on the queue has been attempted (DELIVERY_WAIT_MS says why): a sandbox's
   * delivery is on the queue only while an attempt is under way (a failed one waits off it for its retry).
   */
  private async deliveriesAttempted(): Promise<void> {
    const unattempted = () =>
      orIfMissing(
        "deliveries",
        () =>
          this.sql
            .exec<{ n: number }>("SELECT count(*) AS n FROM deliveries WHERE settled_at IS NULL AND queued = 1")
            .one().n,
        0,
      );
    const deadline = Date.now() + DELIVERY_WAIT_MS;
    while (unattempted() > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
  }

  /** Ends this resource because its sandbox ended; false when it is not that sandbox's (or is gone already). */
  async sandboxEnd(sandboxId: string): Promise<boolean> {
    const meta = this.meta.get();
    if (!meta || this.clock.sandboxId !== sandboxId) return false;
    await this.lifecycle.end(meta, "cancelled");
    return true;
  }

  /**
   * When the next simulated thing is due here, on the resource's clock: its TTL (or an end under way), a notice, its
   * timer, a delivery's retry.
   */
  private simulatedDueAt(meta: MetaRow): number | null {
    if (meta.ended) return this.clock.now();
    const times = [
      meta.expires_at,
      nextNoticeAt(meta),
      nextTimerAt(meta, this.meta.config(meta), this.sql, this.env, this.clock.now()),
      this.nextRetryAt(),
    ];
    return Math.min(...times.map((t) => t ?? Infinity));
  }

  /**
   * One run of the alarm, as the runtime runs it, and what it did at `at`: the timer fired, deliveries it sent, the
   * end.
   */
  private async observed(meta: MetaRow, at: number, run: () => Promise<void>): Promise<SandboxEvent[]> {
    const kind = meta.kind;
    const event = (type: string, detail: Json): SandboxEvent => ({ at, resource_id: meta.id, kind, type, detail });
    const lastSeq = this.lastDeliverySeq();
    const timer =
      !meta.ended &&
      this.clock.now() < meta.expires_at &&
      dueTimer(meta, this.meta.config(meta), this.sql, this.env, this.clock.now()) !== null;
    await run();
    const after = this.meta.get();
    if (!after) return [event(meta.ended === "cancelled" ? "cancelled" : "expired", {})];
    const events: SandboxEvent[] = [];
    if (timer)
      events.push(
        event("timer", { status: requireKind(kind).status?.(this.work.store(after), this.meta.config(after)) ?? null }),
      );
    for (const d of this.deliveriesAfter(lastSeq))
      events.push(
        event("delivery", { delivery_id: d.delivery_id, event_type: d.event_type, method: d.method, url: d.url }),
      );
    return events;
  }

  /** When a failed delivery's retry falls due (resource/deliveries.ts keeps it off the queue until then). */
  private nextRetryAt(): number | null {
    return orIfMissing(
      "deliveries",
      () =>
        this.sql
          .exec<{ at: number | null }>(
            "SELECT MIN(due_at) AS at FROM deliveries WHERE status = 'retrying' AND queued = 0 AND due_at IS NOT NULL",
          )
          .one().at,
      null,
    );
  }

  private lastDeliverySeq(): number {
    return orIfMissing(
      "deliveries",
      () => this.sql.exec<{ seq: number | null }>("SELECT max(seq) AS seq FROM deliveries").one().seq ?? 0,
      0,
    );
  }

  private deliveriesAfter(seq: number): NewDelivery[] {
    return orIfMissing(
      "deliveries",
      () =>
        this.sql
          .exec<NewDelivery>(
            "SELECT seq, delivery_id, event_type, url, method FROM deliveries WHERE seq > ? ORDER BY seq",
            seq,
          )
          .toArray(),
      [],
    );
  }
}
