/**
 * A resource's side of its sandbox (docs/api.md#sandboxes): the sandbox moves its clock a step at a
 * time, and at each step the resource runs what fell due exactly as its alarm would (the same alarm,
 * on the same code paths), reporting what fired. A sandbox's resource ends with its sandbox.
 *
 * What the sandbox steps to is the simulated work: the kind's timer, the expiring notices, the TTL.
 * The outbox's and billing's own timing (a queued delivery's report window, a hold's settlement) runs
 * in real time or rides along on those steps: stepping to it would chase a deadline that moves with the
 * clock, and fire nothing anyone simulates.
 */
import { requireKind } from "../../src/resources/registry";
import type { Json } from "../../src/json";
import type { SandboxEvent, SandboxStep } from "../../src/rpc/sandbox";
import { nextTimerAt, dueTimer } from "./engine-store";
import { nextNoticeAt } from "./lifecycle-notices";
import { ResourceLifecycle } from "./lifecycle";
import { moveClockOffsetTo } from "./test-clock";
import { orIfMissing } from "./missing-table";
import type { MetaRow } from "./meta";

type NewDelivery = { seq: number; delivery_id: string; event_type: string; url: string; method: string };

export class ResourceInSandbox extends ResourceLifecycle {
  /**
   * Moves this resource's clock to `offsetMs` ahead of the real one (never back) and runs its due work,
   * at most `maxRuns` alarm runs; answers what fired and when it is next due. A resource not in
   * `sandboxId` (or gone) answers `present: false` and is not touched.
   */
  async sandboxStep(input: { sandboxId: string; offsetMs: number; maxRuns: number }): Promise<SandboxStep> {
    const meta = this.meta();
    if (!meta || this.clock.sandboxId !== input.sandboxId) return { present: false, now: Date.now() + input.offsetMs, next: null, fired: [] };
    if (input.offsetMs > this.clock.offset) this.clock.offset = moveClockOffsetTo(this.sql, input.offsetMs);
    const fired: SandboxEvent[] = [];
    for (let run = 0; run < input.maxRuns; run++) {
      const current = this.meta();
      const due = current && this.simulatedDueAt(current);
      if (!current || due === null || due > this.now()) break;
      fired.push(...(await this.runStep(current, due)));
    }
    const after = this.meta();
    if (after) await this.armAlarm();
    return { present: after !== null, now: this.now(), next: after ? this.simulatedDueAt(after) : null, fired };
  }

  /** Ends this resource because its sandbox ended; false when it is not that sandbox's (or is gone already). */
  async sandboxEnd(sandboxId: string): Promise<boolean> {
    const meta = this.meta();
    if (!meta || this.clock.sandboxId !== sandboxId) return false;
    await this.end(meta, "cancelled");
    return true;
  }

  /** When the next simulated thing is due here, on the resource's clock: its TTL (or an end under way), a notice, its timer. */
  private simulatedDueAt(meta: MetaRow): number | null {
    if (meta.ended) return this.now();
    const times = [meta.expires_at, nextNoticeAt(meta), nextTimerAt(meta, this.config(meta), this.sql, this.env, this.now())];
    return Math.min(...times.map((t) => t ?? Infinity));
  }

  /** One run of the alarm, as the runtime would run it, and what it did: the timer fired, deliveries it sent, the end. */
  private async runStep(meta: MetaRow, due: number): Promise<SandboxEvent[]> {
    const kind = meta.kind;
    const event = (type: string, detail: Json): SandboxEvent => ({ at: due, resource_id: meta.id, kind, type, detail });
    const lastSeq = this.lastDeliverySeq();
    const timer = !meta.ended && this.now() < meta.expires_at && dueTimer(meta, this.config(meta), this.sql, this.env, this.now()) !== null;
    await this.alarm!();
    const after = this.meta();
    if (!after) return [event(meta.ended === "cancelled" ? "cancelled" : "expired", {})];
    const events: SandboxEvent[] = [];
    if (timer) events.push(event("timer", { status: requireKind(kind).status?.(this.store(after), this.config(after)) ?? null }));
    for (const d of this.deliveriesAfter(lastSeq)) events.push(event("delivery", { delivery_id: d.delivery_id, event_type: d.event_type, method: d.method, url: d.url }));
    return events;
  }

  private lastDeliverySeq(): number {
    return orIfMissing("deliveries", () => this.sql.exec<{ seq: number | null }>("SELECT max(seq) AS seq FROM deliveries").one().seq ?? 0, 0);
  }

  private deliveriesAfter(seq: number): NewDelivery[] {
    return orIfMissing("deliveries", () => this.sql.exec<NewDelivery>("SELECT seq, delivery_id, event_type, url, method FROM deliveries WHERE seq > ? ORDER BY seq", seq).toArray(), []);
  }
}
