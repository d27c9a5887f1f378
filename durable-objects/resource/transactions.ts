/**
 * The resource's two uses of a transaction beyond a plain `transactionSync`: paid calls batched into
 * one commit, and a dry run that is always rolled back.
 *
 * Paid calls that arrive together commit together. Each `transactionSync` at the top level is a
 * SQLite commit of its own, made there and then (workerd's ExplicitTxn: SAVEPOINT … RELEASE), where
 * writes outside one wait for the end of the event loop's turn and share its commit. A paid call
 * must be atomic with its charge, so it cannot simply write outside a transaction; instead the calls
 * queued before the next macrotask run one after another inside one transaction, each in a nested
 * one of its own (a savepoint), so a call that throws rolls back alone, and all of them share one
 * commit. Under load that is one commit for several calls; alone, a call waits one timer tick.
 *
 * Each call runs when the batch does, not when it was queued: whatever it depends on (the resource
 * still being there, which hold pays) is decided inside `work`. If the shared commit itself fails,
 * the runtime breaks the object (its memory goes with it) and every call of the batch fails.
 */
import { AsyncLocalStorage } from "node:async_hooks";

type Queued = { work: () => unknown; resolve: (value: unknown) => void; reject: (err: unknown) => void };
type Outcome = { ok: true; value: unknown } | { ok: false; err: unknown };

/**
 * The most calls one commit carries (each is a savepoint of a few statements; a batch holds the input gate while it
 * runs).
 */
const MAX_BATCH = 256;

export class GroupCommit {
  private queued: Queued[] = [];

  constructor(private readonly storage: DurableObjectStorage) {}

  /**
   * Runs `work` atomically in the next batch; answers after the batch's transaction (the output gate holds any reply
   * until it is durable).
   */
  run<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      // One timer per batch, set by the call that opens it. A timer per call was tried: an object's timers
      // fire one at a time, each waiting its turn behind the calls queued at the object's input gate, so
      // under sustained load they piled up faster than they fired, every batch waited behind the no-op
      // timers of earlier calls (seconds, in the tail), and at the runtime's cap of 10,000 active timers
      // `setTimeout` threw. The timer belongs to the object, not to the call that set it: it fires even if
      // that caller has gone. It is set before the call is queued, so a call whose timer cannot be set
      // fails with nothing queued.
      if (!this.queued.length) setTimeout(() => this.flush(), 0);
      // The batch runs in the context of the call that opened it: each call's work keeps its own (r2-intents.ts).
      this.queued.push({ work: AsyncLocalStorage.bind(work), resolve: resolve as (value: unknown) => void, reject });
      // A batch never grows past MAX_BATCH: the call that fills it runs it now.
      if (this.queued.length >= MAX_BATCH) this.flush();
    });
  }

  private flush(): void {
    const batch = this.queued;
    if (!batch.length) return;
    this.queued = [];
    let outcomes: Outcome[];
    try {
      outcomes = this.storage.transactionSync(() =>
        batch.map((q): Outcome => {
          try {
            return { ok: true, value: this.storage.transactionSync(q.work) };
          } catch (err) {
            return { ok: false, err };
          }
        }),
      );
    } catch (err) {
      for (const q of batch) q.reject(err);
      return;
    }
    batch.forEach((q, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) q.resolve(outcome.value);
      else q.reject(outcome.err);
    });
  }
}

const ROLLBACK = Symbol("rollback");

/**
 * Runs `work` in a transaction that is always rolled back: would the engine accept this call, and what would it answer?
 */
export function dryRun<T>(storage: DurableObjectStorage, work: () => T): T {
  let value: T | undefined;
  try {
    storage.transactionSync(() => {
      value = work();
      throw ROLLBACK;
    });
  } catch (err) {
    if (err !== ROLLBACK) throw err;
  }
  return value as T;
}
