/**
 * A sandbox's limits (docs/api.md#sandboxes): what it is given, how long it lives, and how much one
 * move of its clock may do. Each bound keeps one call finite: a clock move stops at the first limit
 * it meets and says so (`more`), and the next call carries on from there.
 */

/** The free credit a sandbox's token starts with (µUSD): sandbox money, good only inside it. */
export const SANDBOX_CREDIT_MICRO = 10_000_000;
/** Real time a sandbox lives at most, and by default; it ends then with every resource in it. */
export const SANDBOX_MAX_TTL_SECONDS = 86_400;
export const SANDBOX_MIN_TTL_SECONDS = 60;
/** Resources one sandbox may hold at once. */
export const SANDBOX_MAX_RESOURCES = 25;
/** Simulated time one call may move the clock. */
export const MAX_ADVANCE_SECONDS = 366 * 86_400;
/** Firings (timers, deliveries, ends) one call runs before it stops with `more`. */
export const MAX_FIRINGS_PER_CALL = 1_000;
/** Steps (a resource's clock moved to its next due moment) one call takes before it stops with `more`. */
export const MAX_STEPS_PER_CALL = 2_000;
/** Alarm runs one step may make in one resource (work due at the same moment, and what it makes due at once). */
export const MAX_RUNS_PER_STEP = 20;
/**
 * Real time a resource waits, before its clock moves on, for the attempt of each delivery it has on the
 * queue: in real time that attempt is made seconds after it was sent, long before the moment the clock
 * moves to (a schedule skips a tick while its last call is in flight, and a failure's retry is due from it).
 */
export const DELIVERY_WAIT_MS = 5_000;
/** Real time one call may spend stepping (a watch's probes reach real targets) before it stops with `more`. */
export const MAX_ADVANCE_WALL_MS = 20_000;
/** Events a sandbox's timeline keeps, newest; older ones are dropped. */
export const MAX_TIMELINE_EVENTS = 20_000;
/** Requests a sandbox's delivery log keeps, newest; older ones are dropped. */
export const MAX_LOGGED_DELIVERIES = 5_000;
/** A logged request keeps its text body up to this size; a larger one (or a stored one) keeps its digest. */
export const MAX_LOGGED_BODY_BYTES = 4_096;
