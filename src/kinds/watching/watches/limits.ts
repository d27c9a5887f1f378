/**
 * The limits of watches. Every limit is published here, in the OpenAPI descriptions and the price list.
 */

/** Checking more often than once a minute is load testing, not watching; the day price assumes at most 1440 checks. */
export const MIN_INTERVAL_SECONDS = 60;
export const MAX_INTERVAL_SECONDS = 86400;
export const MAX_TIMEOUT_MS = 30_000;
/** The largest answer a check reads (`max_bytes`); a larger one fails the check. */
export const MAX_RESPONSE_BYTES = 5 * 1024 * 1024;
/** Checks kept in the history; older ones are dropped (the state keeps the counts). */
export const MAX_HISTORY = 1000;
/** The part of an answer kept with a check, and sent as evidence with an event. */
export const EXCERPT_CHARS = 512;
/** RSS/Atom item ids remembered to tell new items from old, and items sent in one event. */
export const MAX_SEEN_ITEMS = 500;
export const MAX_ITEMS_PER_EVENT = 20;
