/**
 * R2 writes made before their commit: a kind's prepare step (or timer step) puts bytes, then a transaction records
 * them (a blob's value, a site's files, a snapshot, a rendered PDF, a stored request body). A process that dies
 * between the two would leave bytes nothing refers to until the resource ends. So each such put is preceded by an
 * intent: its key staged as an R2 drop due after a grace (r2-drops.ts, the outbox's pending deletes), with the alarm
 * set by then. The commit that keeps the bytes crosses the intent off in its own transaction; a dead process's
 * intent falls due and the alarm deletes the key (docs/architecture.md#the-outbox-and-crash-recovery).
 *
 * One call's intents are found by its async context (AsyncLocalStorage): its prepare step, its puts and its commit
 * run in that call, whichever path then opens the transaction (a group commit binds each call's work to it,
 * transactions.ts). Keys a call of this process is still writing are spared by the alarm, whatever their age.
 *
 * A large public body is put by the worker, before its call reaches the object (src/resources/public-routes.ts): the
 * worker asks for the intent first (`intendAhead`), and the call then takes the key as its own (`adopt`).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { R2Drops } from "./r2-drops";
import type { ResourceClock } from "./clock";

/** How long an intent waits before the alarm takes its call for dead: far past a prepare step and its upload. */
export const INTENT_GRACE_MS = 15 * 60_000;

export class R2Intents {
  private readonly calls = new AsyncLocalStorage<Set<string>>();
  /** Keys that calls running in this process have put and not yet committed or given up. */
  private readonly writing = new Set<string>();

  constructor(
    private readonly clock: ResourceClock,
    private readonly drops: () => R2Drops,
  ) {}

  /** Runs one call (its prepare step, then its commit) with its intents in scope. */
  async scope<T>(work: () => Promise<T>): Promise<T> {
    // A step inside a call (a public request's prepare) is part of that call: its keys are kept by the same commit.
    if (this.calls.getStore()) return work();
    const keys = new Set<string>();
    try {
      return await this.calls.run(keys, work);
    } finally {
      for (const key of keys) this.writing.delete(key);
    }
  }

  /** The bucket a prepare step sees: a put inside a call writes its intent down first. */
  bucket(bucket: R2Bucket): R2Bucket {
    const put: R2Bucket["put"] = async (key, value, options) => {
      await this.intend(key);
      return bucket.put(key, value, options);
    };
    return {
      head: (key) => bucket.head(key),
      get: ((key: string, options?: R2GetOptions) => bucket.get(key, options)) as R2Bucket["get"],
      put: put as R2Bucket["put"],
      delete: (keys) => bucket.delete(keys),
      list: (options) => bucket.list(options),
      createMultipartUpload: (key, options) => bucket.createMultipartUpload(key, options),
      resumeMultipartUpload: (key, uploadId) => bucket.resumeMultipartUpload(key, uploadId),
    };
  }

  /** The intent of bytes a caller puts before the call that commits them arrives (that call then `adopt`s the key). */
  async intendAhead(key: string): Promise<void> {
    this.drops().stage([key], INTENT_GRACE_MS);
    await this.clock.alarmBy(this.clock.now() + INTENT_GRACE_MS);
  }

  /** Runs the call whose caller put `key` beforehand: its commit keeps the bytes, as it keeps those it put itself. */
  adopt<T>(key: string | null, work: () => Promise<T>): Promise<T> {
    return this.scope(async () => {
      if (key !== null) {
        this.calls.getStore()!.add(key);
        this.writing.add(key);
      }
      return work();
    });
  }

  /** Outside a call (an end's cleanup, a face's finish after its commit) a put has no commit to wait for. */
  private async intend(key: string): Promise<void> {
    const keys = this.calls.getStore();
    if (!keys) return;
    this.drops().stage([key], INTENT_GRACE_MS);
    keys.add(key);
    this.writing.add(key);
    await this.clock.alarmBy(this.clock.now() + INTENT_GRACE_MS);
  }

  /** In a commit's transaction: the bytes this call put are kept (a drop the commit stages itself comes after). */
  keep(): void {
    const keys = this.calls.getStore();
    if (keys?.size) this.drops().unstage([...keys]);
  }

  /** Whether the alarm must leave a due intent alone: a call of this process is still on its way to the commit. */
  isWriting = (key: string): boolean => this.writing.has(key);
}
