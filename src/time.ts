/** Calendar helpers shared by the daily counters and salts. */

/** The UTC calendar day of a Unix-ms time, as YYYY-MM-DD (sortable, so "older than" is a string compare). */
export const utcDay = (now: number) => new Date(now).toISOString().slice(0, 10);

/** RFC 3339 UTC, as every `*_at` field of the API (API.md §3). */
export const iso = (ms: number) => new Date(ms).toISOString();
