/**
 * R2 deletes a commit obliges (a replaced object's old bytes, a settled delivery's body),
 * recorded in the same transaction and made once it has committed. One the bucket refuses,
 * or one a dying process never made, stays here until the alarm makes it, so bytes the
 * resource let go of do not outlive it until its end. Keys are never written again after
 * being dropped (kinds name new content with new keys), so a late delete is safe.
 */
import { DISPATCH_GRACE_MS } from "../../src/delivery/outbox-policy";
import type { ResourceFaults } from "../../src/rpc/resource-faults";
import { takeFault } from "./test-faults";

export const R2_DROPS_TABLE = "CREATE TABLE r2_drops (key TEXT PRIMARY KEY, due_at INTEGER NOT NULL)";

const RETRY_MS = 60_000;
/** R2 deletes at most 1000 keys a call. */
const PER_CALL = 1000;

export class R2Drops {
  constructor(
    private readonly sql: SqlStorage,
    private readonly bucket: R2Bucket,
    private readonly clock: () => number,
    private readonly faults: ResourceFaults,
  ) {}

  /**
   * In the caller's transaction. Due after a grace, so the alarm makes them if the caller cannot (an intent's, before
   * its put: r2-intents.ts).
   */
  stage(keys: string[], graceMs = DISPATCH_GRACE_MS): void {
    const due = this.clock() + graceMs;
    for (const key of keys)
      this.sql.exec("INSERT INTO r2_drops (key, due_at) VALUES (?, ?) ON CONFLICT (key) DO NOTHING", key, due);
  }

  /** In a commit's transaction: intents whose bytes the commit keeps. */
  unstage(keys: string[]): void {
    for (const key of keys) this.sql.exec("DELETE FROM r2_drops WHERE key = ?", key);
  }

  /**
   * Deletes `keys` (after their commit) or, with none given, every drop that is due (the alarm), but those `spared`
   * (keys a call of this process is still writing).
   */
  async flush(keys?: string[], spared: (key: string) => boolean = () => false): Promise<void> {
    const now = this.clock();
    const doomed =
      keys ??
      this.sql
        .exec<{ key: string }>("SELECT key FROM r2_drops WHERE due_at <= ? LIMIT ?", now, PER_CALL)
        .toArray()
        .map((r) => r.key)
        .filter((key) => !spared(key));
    for (let i = 0; i < doomed.length; i += PER_CALL) {
      const chunk = doomed.slice(i, i + PER_CALL);
      try {
        if (takeFault(this.faults, "failDrops")) throw new Error("R2 refused the delete (injected)");
        await this.bucket.delete(chunk);
        for (const key of chunk) this.sql.exec("DELETE FROM r2_drops WHERE key = ?", key);
      } catch (err) {
        console.error("R2 delete failed; the alarm tries again", err);
        for (const key of chunk) this.sql.exec("UPDATE r2_drops SET due_at = ? WHERE key = ?", now + RETRY_MS, key);
      }
    }
  }

  nextDueAt(): number | null {
    return this.sql.exec<{ at: number | null }>("SELECT MIN(due_at) AS at FROM r2_drops").one().at;
  }
}
