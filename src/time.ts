/** Time helpers: calendar days for the daily counters and salts, RFC 3339 in and out. */

/** The UTC calendar day of a Unix-ms time, as YYYY-MM-DD (sortable, so "older than" is a string compare). */
export const utcDay = (now: number) => new Date(now).toISOString().slice(0, 10);

/** RFC 3339 UTC, as every `*_at` field of the API (docs/api.md#requests-and-conventions). */
export const iso = (ms: number) => new Date(ms).toISOString();

/** The same for a time that may be absent: null stays null. */
export const isoOrNull = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : iso(ms));

/**
 * A caller's RFC 3339 time as Unix ms, never before `now`: a time in the past (even one before
 * 1970) means "now", so nothing is ever scheduled for a moment that has gone (an alarm at ≤ 0 fails).
 */
export const notBefore = (at: string, now: number) => Math.max(now, Date.parse(at));
