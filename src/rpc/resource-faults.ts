/**
 * Test-only faults in a resource's object, as the worker and the tests name them (implemented by
 * durable-objects/resource/test-faults.ts), and how the worker recognises an injected death of the whole runtime.
 */
import type { ErrorData } from "../http/errors";
import type { Env } from "../env";

/** The faults: in its creation, its calls, its outbox of deliveries and R2 deletes. */
export interface ResourceFaults {
  /**
   * The next create, extend or end stops here, as if its process had died: nothing after runs (no undo, no answer).
   * `create-answer-lost`: the create is done (made, indexed, paid), then the whole runtime dies, the worker with it:
   * its Idempotency-Key stays claimed and the caller gets no answer (test-faults.ts); `op-answer-lost` likewise
   * after an operation is done and paid. `after-prepare`: the next call
   * with a prepare step (an operation, a public request) dies between that step (its R2 puts) and its commit.
   * `public-request-lost`: the runtime dies, the worker with it, after the worker stored a public request's large body
   * and before the object handled the request.
   */
  dieAt?:
    | "after-prepare"
    | "create-after-charge"
    | "create-after-commit"
    | "create-after-index"
    | "create-answer-lost"
    | "op-answer-lost"
    | "extend-after-charge"
    | "end-after-mark"
    | "public-request-lost";
  /** The next this-many dispatches after a commit do nothing, as if the process had died there. */
  skipDispatches?: number;
  /** The queue refuses the next this-many sendBatch calls. */
  refuseSends?: number;
  /** The next this-many messages are accepted by the "queue" and never delivered. */
  loseSends?: number;
  /** Replaces REPORT_WINDOW_MS, so a lost message is re-sent without a 15-minute wait. */
  reportWindowMs?: number;
  /** The next this-many R2 deletes the outbox makes fail. */
  failDrops?: number;
  /** The next call with a prepare step waits this long between its steps, so another call commits in between. */
  pauseAfterPrepareMs?: number;
}

/** The points where an injected death takes the whole runtime, the worker with it (test-faults.ts). */
export const RUNTIME_DEATHS: ReadonlySet<ResourceFaults["dieAt"]> = new Set([
  "create-answer-lost",
  "op-answer-lost",
  "public-request-lost",
]);

/**
 * Test only (ENVIRONMENT=test): whether `error` is such a death. The worker then stops as a real crash would stop it,
 * leaving undone what it would have written after the call (an idempotency key kept or freed, a stored body deleted).
 */
export const runtimeDied = (env: Env, error: ErrorData | undefined): boolean =>
  env.ENVIRONMENT === "test" && error?.extra?.injected_death === "runtime";
