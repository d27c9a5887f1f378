/**
 * A resource's clock and its alarm. The clock runs ahead of the real one only in tests that move
 * it (test-clock.ts), so a test sees a day pass without waiting or rewriting tables, and in a
 * sandbox's resources, whose sandbox moves it (sandbox-clock.ts); every time a
 * resource keeps (expiry, timers, notices, settlements) is read against it. The alarm is set in
 * real time, and what it is set for is remembered, so work that must be finished by the alarm can
 * bring it forward without a storage read.
 */
import { DISPATCH_GRACE_MS } from "../../src/delivery/outbox-policy";
import { readClockOffset } from "./test-clock";
import { readSandboxId } from "./sandbox-clock";

export class ResourceClock {
  /** How far the resource's clock runs ahead of the real one (0 outside tests and sandboxes). */
  offset = 0;
  /** The sandbox whose clock this is (and whose money alone pays here); null for a real resource. */
  sandboxId: string | null = null;
  /** When the alarm is set for (real time), as far as this process knows; null: none, or not known. */
  private armedAt: number | null = null;

  constructor(private readonly storage: DurableObjectStorage) {}

  /** Reads the offset and the alarm, once per object lifetime (under blockConcurrencyWhile). */
  async load(): Promise<void> {
    this.offset = readClockOffset(this.storage.sql);
    this.sandboxId = readSandboxId(this.storage.sql);
    this.armedAt = await this.storage.getAlarm();
  }

  now(): number {
    return Date.now() + this.offset;
  }

  /**
   * A moment of the resource's clock as the D1 index keeps it. A sandbox's resource is indexed in real time, the time
   * its sandbox is checked live by and ends by (its real-time TTL), and the time the index's own sweeps count
   * (tombstones leave 30 real days after the end); its own answers keep the sandbox's clock. A resource whose test
   * clock moved keeps that clock in the index too, as if the time had passed.
   */
  indexTime(resourceTime: number): number {
    return this.sandboxId ? resourceTime - this.offset : resourceTime;
  }

  /**
   * Sets the alarm for a moment of the resource's clock (anything already due fires now: the runtime refuses one at or
   * before the epoch).
   */
  async alarmAt(resourceTime: number): Promise<void> {
    this.armedAt = Math.max(Date.now(), resourceTime - this.offset);
    await this.storage.setAlarm(this.armedAt);
  }

  /** Brings the alarm forward to a moment of the resource's clock, unless it is known to be set sooner. */
  async alarmBy(resourceTime: number): Promise<void> {
    const at = Math.max(Date.now(), resourceTime - this.offset);
    if (this.armedAt !== null && this.armedAt <= at) return;
    this.armedAt = at;
    await this.storage.setAlarm(at);
  }

  /** The runtime cleared the alarm (it runs it), or the resource deleted it. */
  alarmCleared(): void {
    this.armedAt = null;
  }

  /**
   * Brings the alarm within the outbox's grace when work records a send or an R2 delete. Called
   * inside the transaction and not awaited, so the alarm is written with the rows: a process that
   * dies before carrying them out leaves them to the alarm.
   */
  armSoon(): void {
    const at = Date.now() + DISPATCH_GRACE_MS;
    if (this.armedAt !== null && this.armedAt <= at) return;
    this.armedAt = at;
    this.storage.setAlarm(at).catch((err) => console.error("outbox alarm not set", err));
  }
}
