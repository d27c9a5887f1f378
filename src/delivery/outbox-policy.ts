/**
 * How the resource's outbox (durable-objects/resource/deliveries.ts) keeps its
 * promise of at-least-once delivery, and how much of its log it keeps. The
 * retention figures are published with the price list's limits.
 */

/**
 * A delivery is recorded with the work that sends it and put on the queue once that
 * commits; the alarm is set for this long after, so a process that died in between
 * (eviction, deploy, crash) leaves the send to the alarm.
 */
export const DISPATCH_GRACE_MS = 10_000;

/**
 * A queued delivery whose consumer has reported nothing this long after the attempt it
 * was due (queue backlogs and retries included) is put on the queue again, under its
 * same `webhook-id`: a message lost between the queue and the attempt log is re-sent.
 */
export const REPORT_WINDOW_MS = 15 * 60_000;

/**
 * Under `wrangler dev` (ENVIRONMENT "development") the queue keeps accepted messages in the process's
 * memory: a crash or a restart loses them, and waiting out REPORT_WINDOW_MS would deliver them a quarter
 * of an hour late. There the alarm looks this often, while the queue has rows, whether the process that
 * queued them is still the one running; rows queued by another are sent again at once. Deployed, the queue
 * keeps its messages, a process seldom outlives its object, and the window alone applies.
 */
export const IN_MEMORY_QUEUE_CHECK_MS = 30_000;

/** Whether the queue this process sends to loses its messages with the process (see IN_MEMORY_QUEUE_CHECK_MS). */
export function queueInMemory(env: { ENVIRONMENT: string }): boolean {
  return env.ENVIRONMENT === "development";
}

/** Waits before sending again a delivery the queue refused, in seconds (DELIVERY_RETRY_SCALE scales them). */
export const REQUEUE_DELAYS_SECONDS = [5, 30, 120, 600, 1800, 3600, 7200, 14400] as const;

/** After this many refusals in a row the delivery is dead (it stays in the log, and can be retried). */
export const MAX_REFUSALS = REQUEUE_DELAYS_SECONDS.length;

/**
 * The deliveries log keeps every delivery still being attempted, and of the settled ones
 * (delivered, aborted, dead) the newest `settled_kept` and none older than `settled_days`;
 * each delivery keeps its newest `attempts_kept` attempts. A dead delivery keeps its stored
 * body (for a retry) until it leaves the log.
 */
export const DELIVERY_RETENTION = { settled_kept: 1000, settled_days: 30, attempts_kept: 50 } as const;
