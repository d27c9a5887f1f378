/**
 * When a failed delivery is tried again (API.md §11, Svix's schedule): after
 * about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h; the attempt after the
 * last of these that fails sends the message to the dead-letter queue
 * (wrangler.toml: max_retries = 7).
 */
export const RETRY_DELAYS_SECONDS = [5, 300, 1800, 7200, 18000, 36000, 36000] as const;

export const MAX_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;

/** Delay before the next try, after `attempt` (1-based) failed; null when none is left. */
export function retryDelay(attempt: number): number | null {
  return RETRY_DELAYS_SECONDS[attempt - 1] ?? null;
}
