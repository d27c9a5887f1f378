/**
 * Putting the outbox's rows (deliveries.ts) on the DELIVERIES queue: after the commit that wrote them, in batches, or
 * from the alarm for the rows that never reached the queue or were not heard of in time. A refusal leaves a row for
 * the alarm, later each time; a row too large for a message, or refused too often, dies here and is reported to the
 * caller to settle. The messages carry the request as the row keeps it (a secret one sealed), and the process that
 * queued it, so where the queue is held in memory the alarm knows a dead process's rows.
 *
 * Times: due_at is on the resource's clock for a row that has to be put on the queue and on the real one while the
 * queue has it (deliveries.ts says why).
 */
import type { Env } from "../../src/env";
import { MAX_MESSAGE_BYTES, batches, type WebhookMessage } from "../../src/delivery/messages";
import type { DeliveryReport } from "../../src/rpc/resource";
import type { ResourceFaults } from "../../src/rpc/resource-faults";
import {
  IN_MEMORY_QUEUE_CHECK_MS,
  MAX_REFUSALS,
  queueInMemory,
  REPORT_WINDOW_MS,
  REQUEUE_DELAYS_SECONDS,
} from "../../src/delivery/outbox-policy";
import { utf8Length } from "../../src/bytes";
import type { ResourceClock } from "./clock";
import { takeFault } from "./test-faults";
import { sandboxLogOf } from "./sandbox-clock";
import { readDelivery, type DeliveryRow } from "./deliveries-tables";

/** A row still to be put on the queue: being attempted, and not on it. */
const UNQUEUED = "queued = 0 AND status IN ('pending', 'retrying')";

/**
 * This process (isolate), as the rows it put on the queue name it; drawn on first use (no random values at a module's
 * top level).
 */
let processId: string | undefined;
export const thisProcess = (): string => (processId ??= crypto.randomUUID());

export class DeliveryDispatch {
  /** Rows being put on the queue by this process right now: the alarm leaves them alone. */
  private readonly dispatching = new Set<string>();

  constructor(
    private readonly sql: SqlStorage,
    private readonly env: Env,
    private readonly resourceId: string,
    /** The resource's clock, and how far it runs ahead of the real one (the test clock). */
    private readonly clock: Pick<ResourceClock, "now" | "offset" | "sandboxId">,
    private readonly faults: ResourceFaults,
  ) {}

  /**
   * Puts these rows on the queue (after the commit that wrote them, or from the alarm), in
   * batches. A refusal leaves a row for the alarm, later each time; answers the reports of the
   * rows that died here (too large for a message, refused too often), for the caller to settle.
   */
  async dispatch(ids: string[], sealedSecret: string, fromAlarm = false): Promise<DeliveryReport[]> {
    if (!fromAlarm && takeFault(this.faults, "skipDispatches")) return [];
    const dead: DeliveryReport[] = [];
    const ready: { message: WebhookMessage; bytes: number }[] = [];
    const logTo = this.clock.sandboxId ? sandboxLogOf(this.sql) : null;
    for (const id of ids) {
      if (this.dispatching.has(id)) continue;
      const row = readDelivery(this.sql, id);
      if (!row || (row.status !== "pending" && row.status !== "retrying")) continue;
      const message = this.message(row, sealedSecret, logTo);
      const bytes = utf8Length(JSON.stringify(message));
      if (bytes > MAX_MESSAGE_BYTES) {
        dead.push(
          this.notQueued(
            id,
            `the request is ${bytes} bytes with its headers; a queued delivery carries at most ` +
              `${MAX_MESSAGE_BYTES} (send larger bodies stored)`,
          ),
        );
        continue;
      }
      this.dispatching.add(id);
      ready.push({ message, bytes });
    }
    try {
      for (const batch of batches(ready)) {
        try {
          if (takeFault(this.faults, "refuseSends")) throw new Error("the queue refused the batch (injected)");
          const lost = takeFault(this.faults, "loseSends");
          if (!lost) await this.env.DELIVERIES.sendBatch(batch.map((body) => ({ body, contentType: "json" as const })));
          const heardBy = Date.now() + (this.faults.reportWindowMs ?? REPORT_WINDOW_MS);
          // A report may have come in while the batch was sent: a settled row stays settled, its later deadline stays.
          for (const m of batch) {
            this.sql.exec(
              `UPDATE deliveries SET sends = MAX(sends, ?), refusals = 0,
                 due_at = CASE WHEN settled_at IS NOT NULL THEN NULL
                   WHEN queued = 1 AND due_at > ? THEN due_at ELSE ? END,
                 queued = 1, queued_by = ?
               WHERE delivery_id = ?`,
              m.send,
              heardBy,
              heardBy,
              thisProcess(),
              m.deliveryId,
            );
          }
        } catch (err) {
          const reason = err instanceof Error ? err.message : String(err);
          for (const m of batch) {
            const refusals = readDelivery(this.sql, m.deliveryId)!.refusals + 1;
            if (refusals >= MAX_REFUSALS)
              dead.push(this.notQueued(m.deliveryId, `the queue refused it ${refusals} times: ${reason}`));
            else {
              const wait = REQUEUE_DELAYS_SECONDS[refusals - 1]! * 1000 * Number(this.env.DELIVERY_RETRY_SCALE);
              this.sql.exec(
                "UPDATE deliveries SET refusals = ?, queued = 0, due_at = ? WHERE delivery_id = ?",
                refusals,
                this.clock.now() + wait,
                m.deliveryId,
              );
            }
          }
        }
      }
    } finally {
      for (const { message } of ready) this.dispatching.delete(message.deliveryId);
    }
    return dead;
  }

  /**
   * The alarm's part: sends again every row that is due (not on the queue, or not heard of in time), and
   * where the queue is held in memory every row another process queued (that process died, and its queue with it).
   */
  async dispatchDue(sealedSecret: string): Promise<DeliveryReport[]> {
    const real = Date.now();
    const [lost, lostBinding] = queueInMemory(this.env)
      ? [" OR (queued = 1 AND queued_by IS NOT ?)", [thisProcess()]]
      : ["", []];
    const ids = this.sql
      .exec<{ delivery_id: string }>(
        `SELECT delivery_id FROM deliveries WHERE due_at IS NOT NULL AND ((queued = 0 AND due_at <= ?) OR ` +
          `(queued = 1 AND due_at <= ?)${lost}) ORDER BY seq LIMIT 500`,
        this.clock.now(),
        real,
        ...lostBinding,
      )
      .toArray()
      .map((r) => r.delivery_id);
    return ids.length ? this.dispatch(ids, sealedSecret, true) : [];
  }

  /**
   * Before the resource's storage is deleted (its end): every row not on the queue is put there now, whatever it was
   * waiting for (a refusal's backoff, a sandbox's simulated wait). Answers the reports of the rows that died here.
   */
  async dispatchUnqueued(sealedSecret: string): Promise<DeliveryReport[]> {
    const ids = this.sql
      .exec<{ delivery_id: string }>(`SELECT delivery_id FROM deliveries WHERE ${UNQUEUED} ORDER BY seq LIMIT 500`)
      .toArray()
      .map((r) => r.delivery_id);
    return ids.length ? this.dispatch(ids, sealedSecret, true) : [];
  }

  /** How many rows still wait to be put on the queue. */
  unqueued(): number {
    return this.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM deliveries WHERE ${UNQUEUED}`).one().n;
  }

  /** When the alarm must next act for the outbox, on the resource's clock (null: nothing waits). */
  nextDueAt(): number | null {
    const q = (queued: number) =>
      this.sql
        .exec<{ at: number | null }>(
          "SELECT MIN(due_at) AS at FROM deliveries WHERE queued = ? AND due_at IS NOT NULL",
          queued,
        )
        .one().at;
    const waiting = q(0);
    let onQueue = q(1);
    // Looked at again soon, to find out whether this process (and the queue in its memory) is still the one running.
    if (onQueue !== null && queueInMemory(this.env)) onQueue = Math.min(onQueue, Date.now() + IN_MEMORY_QUEUE_CHECK_MS);
    const times = [waiting, onQueue === null ? null : onQueue + this.clock.offset].filter(
      (t): t is number => t !== null,
    );
    return times.length ? Math.min(...times) : null;
  }

  /** A row that never reached the queue, and will not: logged as an attempt, and dead. */
  private notQueued(id: string, reason: string): DeliveryReport {
    return {
      deliveryId: id,
      send: null,
      attempt: {
        at: this.clock.now(),
        outcome: "failed",
        statusCode: null,
        error: `not queued: ${reason}`,
        durationMs: 0,
        responseExcerpt: null,
      },
      final: "dead",
      retryInSeconds: null,
    };
  }

  /** A secret body travels sealed too: the queue and its dead-letter queue never hold it in clear. */
  private message(row: DeliveryRow, sealedSecret: string, logTo: string | null): WebhookMessage {
    return {
      type: "webhook",
      resourceId: this.resourceId,
      deliveryId: row.delivery_id,
      send: row.sends + 1,
      url: row.url,
      method: row.method,
      headers: JSON.parse(row.headers) as Record<string, string>,
      body: row.body,
      ...(row.body_key ? { bodyKey: row.body_key } : {}),
      bodySealed: row.sealed === 1,
      ...(row.sealed === 2 ? { requestSealed: true } : {}),
      sealedSecret,
      ...(row.retry_delays ? { retryDelays: JSON.parse(row.retry_delays) as number[] } : {}),
      ...(logTo ? { logTo: { sandboxId: logTo, eventType: row.event_type } } : {}),
    };
  }
}
