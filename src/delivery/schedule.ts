/**
 * When a failed delivery is tried again (docs/api.md#outbound-events-webhooks, Svix's schedule): after
 * about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h; the attempt after the
 * last of these that fails sends the message to the dead-letter queue
 * (wrangler.toml: max_retries = 7).
 */
export const RETRY_DELAYS_SECONDS = [5, 300, 1800, 7200, 18000, 36000, 36000] as const;

export const MAX_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;

/**
 * The longest a queue can hold a message back (Cloudflare Queues: 12 hours), so the longest a custom schedule may wait.
 */
export const MAX_RETRY_DELAY_SECONDS = 43_200;

/**
 * Delay before the next try, after `attempt` (1-based) failed, on `schedule` (a delivery's own, or
 * the default); null when none is left. A default schedule's end is the queue's dead-letter queue;
 * a custom one's, shorter, is declared by the consumer.
 */
export function retryDelay(attempt: number, schedule: readonly number[] = RETRY_DELAYS_SECONDS): number | null {
  return schedule[attempt - 1] ?? null;
}
