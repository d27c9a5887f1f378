/**
 * The resource's outbound requests: a transactional outbox and its attempt log.
 *
 * A send is a row written in the transaction of the work that makes it, so a rolled-back
 * operation sends nothing and a committed one is never forgotten. Once the work commits the
 * rows go on the DELIVERIES queue in batches (delivery-dispatch.ts); the consumer reports each attempt back here.
 * Whatever did not reach the queue (the process died after the commit, the queue refused)
 * or was not heard of in time (a lost message) is put on the queue again by the resource's
 * alarm: at least once, and a repeat keeps its `webhook-id`.
 *
 * A body is text, kept in the row and carried by the message, or an R2 object below the
 * resource's prefix (StoredBody), which every delivery naming it shares and which is
 * deleted once none of them can be sent again. The log is the resource's data: exported
 * with it, bounded by DELIVERY_RETENTION, deleted with it.
 *
 * Times: created_at, updated_at and settled_at are on the resource's clock (what the log
 * shows); due_at (when the alarm must act) is on the resource's clock for a row that has
 * to be put on the queue and on the real one while the queue has it, since how long a queue
 * takes is real time whatever a test's clock says. An attempt is logged at the moment it ended on the resource's clock.
 *
 * A sandbox's resource (docs/api.md#sandboxes) retries on its sandbox's clock: a failed attempt is not handed back to
 * the queue, whose delays are real time; the row waits, off the queue, until its retry falls due on the resource's
 * clock (due_at), and the alarm, or the sandbox's clock stepping to that moment, sends it again. When the sandbox
 * keeps its deliveries in a log, the message says so, and the send writes there (delivery/sandbox-log.ts).
 */
import type { Env } from "../../src/env";
import { AppError } from "../../src/http/errors";
import { envelope } from "../../src/delivery/events";
import type { DeliveryReport } from "../../src/rpc/resource";
import type { ResourceFaults } from "../../src/rpc/resource-faults";
import { DISPATCH_GRACE_MS, REPORT_WINDOW_MS } from "../../src/delivery/outbox-policy";
import type { Json } from "../../src/json";
import type { OutgoingRequest } from "../../src/kind/kind";
import type { R2Drops } from "./r2-drops";
import type { ResourceClock } from "./clock";
import { thisProcess, type DeliveryDispatch } from "./delivery-dispatch";
import { readDelivery, type DeliveryRow } from "./deliveries-tables";
import { deliveryPage, deliveryView } from "./delivery-views";
import { storedText } from "./delivery-text";
import { deleteExpired, logAttempt } from "./delivery-retention";
import { retryDelay } from "../../src/delivery/schedule";

/** Statuses in which the delivery may still be sent (a dead one by a manual retry): its stored body stays. */
const BODY_NEEDED = "('pending', 'retrying', 'dead')";

export class DeliveryLog {
  /** Stored bodies let go of since the caller last asked (takeReleased): recorded in r2_drops, to delete now. */
  private released: string[] = [];

  constructor(
    private readonly sql: SqlStorage,
    private readonly env: Env,
    private readonly resourceId: string,
    /** The resource's clock, and how far it runs ahead of the real one (the test clock). */
    private readonly clock: Pick<ResourceClock, "now" | "offset" | "sandboxId">,
    private readonly drops: R2Drops,
    /** Puts the rows on the queue (delivery-dispatch.ts). */
    private readonly dispatcher: DeliveryDispatch,
    private readonly faults: ResourceFaults,
  ) {}

  /**
   * Records a request in the caller's transaction; true when it is new (a known id is sent once).
   * Due after a grace, so the alarm sends it if the dispatch after the commit never happens.
   */
  stage(id: string, request: OutgoingRequest): boolean {
    const now = this.clock.now();
    const body = request.body;
    const key = body !== null && typeof body === "object" ? body.key : null;
    const secret = request.secret;
    const text = storedText(this.env, request);
    const inserted =
      this.sql.exec(
        `INSERT INTO deliveries (delivery_id, event_type, url, method, headers, body, body_key, sealed, status,
             created_at, updated_at, due_at, retry_delays)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?) ON CONFLICT (delivery_id) DO NOTHING`,
        id,
        request.eventType,
        secret ? secret.shownUrl : request.url,
        request.method,
        secret ? "{}" : JSON.stringify(request.headers),
        text,
        key,
        secret ? 2 : request.sensitive ? 1 : 0,
        now,
        now,
        now + DISPATCH_GRACE_MS,
        request.retryDelays ? JSON.stringify(request.retryDelays) : null,
      ).rowsWritten > 0;
    if (!inserted && key) this.release([key]); // handed over for a send that was already made
    // Every hundredth row trims the log, in the same transaction.
    if (inserted && this.lastSeq() % 100 === 0) this.prune();
    return inserted;
  }

  /** Records and sends a lifecycle event to `url` (notify_url), outside any kind's work. */
  async emit(
    url: string,
    sealedSecret: string,
    type: string,
    data: Record<string, unknown>,
    uniqueBy: string,
  ): Promise<string> {
    const event = envelope(type, this.resourceId, data, uniqueBy, this.clock.now());
    const staged = this.stage(event.id, {
      url,
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(event),
      eventType: type,
    });
    // Emitted before (a resumed end, a notice sent again): the outbox has it, queued or due, and sends it once.
    if (!staged) return event.id;
    const dead = await this.dispatcher.dispatch([event.id], sealedSecret);
    if (dead.length) throw new Error(dead[0]!.attempt?.error ?? "not queued");
    return event.id;
  }

  /**
   * An attempt (or the end) into the log. Answers whether the reporting message should go on
   * retrying (not once the delivery is settled, nor when it has been sent again since; a
   * delivery this log no longer holds goes on, as one whose resource has ended does), and
   * whether this report is the one that settled it (the kind hears of that once).
   */
  record(report: DeliveryReport): { retry: boolean; settled: boolean } {
    const row = this.row(report.deliveryId);
    if (!row) return { retry: true, settled: false };
    const stale = report.send !== null && report.send < row.sends;
    const now = this.clock.now();
    let attempts = row.attempts;
    const a = report.attempt;
    if (a) {
      // Numbered here, not by the queue: a manual retry or a re-send starts a new message, and the log keeps every
      // attempt.
      attempts += 1;
      logAttempt(this.sql, report.deliveryId, attempts, { ...a, at: a.at + this.clock.offset }, now);
    }
    const settled = row.settled_at !== null;
    // An older message's failures, and its end in the dead-letter queue, change nothing: a newer one is under way.
    if (settled || (stale && report.final !== "delivered" && report.final !== "aborted"))
      return { retry: false, settled: false };
    if (report.final) {
      this.settle(row, report.final, now);
      return { retry: false, settled: true };
    }
    if (this.clock.sandboxId) return this.retryInSandbox(row, attempts, a ? a.at + this.clock.offset : now);
    const heardBy = Date.now() + (report.retryInSeconds ?? 0) * 1000 + (this.faults.reportWindowMs ?? REPORT_WINDOW_MS);
    this.sql.exec(
      "UPDATE deliveries SET status = 'retrying', queued = 1, due_at = ?, queued_by = ? WHERE delivery_id = ?",
      heardBy,
      thisProcess(),
      report.deliveryId,
    );
    return { retry: true, settled: false };
  }

  /**
   * A sandbox's failed attempt (it ended at `failedAt`): the retry waits off the queue for its moment on the resource's
   * clock, after the delivery's schedule (unscaled: DELIVERY_RETRY_SCALE shortens real waits in tests, and these are
   * simulated), and the delivery is dead once the schedule is spent, as the queue's dead-letter queue would have it.
   */
  private retryInSandbox(row: DeliveryRow, attempts: number, failedAt: number): { retry: boolean; settled: boolean } {
    const delay = retryDelay(attempts, row.retry_delays ? (JSON.parse(row.retry_delays) as number[]) : undefined);
    if (delay === null) {
      this.settle(row, "dead", this.clock.now());
      return { retry: false, settled: true };
    }
    this.sql.exec(
      "UPDATE deliveries SET status = 'retrying', queued = 0, due_at = ? WHERE delivery_id = ?",
      failedAt + delay * 1000,
      row.delivery_id,
    );
    return { retry: false, settled: false };
  }

  /** Stored bodies a delivery not yet settled may still send: an end keeps them (src/delivery/ended-bodies.ts). */
  bodiesStillSent(): string[] {
    return this.sql
      .exec<{ body_key: string }>(
        "SELECT DISTINCT body_key FROM deliveries WHERE body_key IS NOT NULL AND status IN ('pending', 'retrying')",
      )
      .toArray()
      .map((r) => r.body_key);
  }

  /** Sends a settled delivery again, now (after its retries ran out, or to replay it). */
  async retry(deliveryId: string, sealedSecret: string): Promise<{ view: Json; dead: DeliveryReport[] }> {
    const row = this.row(deliveryId);
    if (!row) throw new AppError("not_found", `No delivery ${deliveryId} on this resource.`);
    // A delivery still on its schedule would then run twice at once.
    if (row.status === "pending" || row.status === "retrying")
      throw new AppError("conflict", `Delivery ${deliveryId} is still being attempted (${row.status}).`);
    if (row.body_key && !(await this.env.BUCKET.head(row.body_key)))
      throw new AppError("conflict", `The body of delivery ${deliveryId} is no longer kept; it cannot be sent again.`);
    const now = this.clock.now();
    this.sql.exec(
      "UPDATE deliveries SET status = 'pending', settled_at = NULL, refusals = 0, queued = 0, due_at = ?, " +
        "updated_at = ? WHERE delivery_id = ?",
      now + DISPATCH_GRACE_MS,
      now,
      deliveryId,
    );
    const dead = await this.dispatcher.dispatch([deliveryId], sealedSecret);
    return { view: deliveryView(this.sql, this.row(deliveryId)!), dead };
  }

  /** Oldest first; the cursor is the last row's sequence number. */
  list(limit: number, cursor: string | null): { items: Json[]; next_cursor: string | null } {
    return deliveryPage(this.sql, [], limit, cursor);
  }

  private row(id: string): DeliveryRow | undefined {
    return readDelivery(this.sql, id);
  }

  private lastSeq(): number {
    return this.sql.exec<{ seq: number }>("SELECT last_insert_rowid() AS seq").one().seq;
  }

  /**
   * The kind gives up on a delivery not yet settled (what it carries was taken another way): it is
   * settled as aborted, so its message stops retrying; an attempt already under way may still be
   * made, and its report changes nothing. Answers whether it was still open.
   */
  cancel(deliveryId: string): boolean {
    const row = this.row(deliveryId);
    if (!row || row.settled_at !== null) return false;
    this.settle(row, "aborted", this.clock.now());
    return true;
  }

  private settle(row: DeliveryRow, final: "delivered" | "aborted" | "dead", now: number): void {
    this.sql.exec(
      "UPDATE deliveries SET status = ?, queued = 0, due_at = NULL, settled_at = ?, updated_at = ? WHERE " +
        "delivery_id = ?",
      final,
      now,
      now,
      row.delivery_id,
    );
    if (row.body_key) this.release([row.body_key]);
  }

  /** Deletes (after the commit) the stored bodies no delivery can send again. */
  private release(keys: string[]): void {
    const unused = keys.filter(
      (k) =>
        !this.sql.exec(`SELECT 1 FROM deliveries WHERE body_key = ? AND status IN ${BODY_NEEDED} LIMIT 1`, k).toArray()
          .length,
    );
    if (unused.length) {
      this.drops.stage(unused);
      this.released.push(...unused);
    }
  }

  /** The stored bodies released since the last call, for the caller to delete once what released them has committed. */
  takeReleased(): string[] {
    const keys = this.released;
    this.released = [];
    return keys;
  }

  /** Applies DELIVERY_RETENTION to settled deliveries and their attempts (delivery-retention.ts). */
  prune(): void {
    const keys = deleteExpired(this.sql, this.clock.now());
    if (keys.length) this.release(keys);
  }
}
