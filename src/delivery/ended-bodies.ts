/**
 * Stored bodies of deliveries still under way when their resource ends. A delivery outlives its resource: what was
 * accepted is sent, at least once, whatever happens to the resource after (docs/api.md#outbound-events-webhooks). Its
 * body, if stored in R2 below the resource's prefix, must outlive the resource too, or the next attempt would find it
 * gone. The end keeps such keys and lists them in D1 (migrations/0006_ended_bodies.sql); the object that knew when
 * they settle is gone with its storage, so the daily sweep deletes them once every attempt they could still serve is
 * past.
 */
import { MAX_ATTEMPTS, MAX_RETRY_DELAY_SECONDS } from "./schedule";

/**
 * How long a body is kept after its resource ended: the longest schedule a delivery may have (each retry held back the
 * queue's longest), and a day more for the queue's own lag and the re-sends of a message nobody reported on.
 */
export const ENDED_BODY_KEEP_MS = ((MAX_ATTEMPTS - 1) * MAX_RETRY_DELAY_SECONDS + 86_400) * 1000;

/** D1 binds at most 100 parameters a statement; R2 deletes at most 1000 keys a call. */
const PER_STATEMENT = 50;
const PER_SWEEP = 1000;

const chunksOf = (keys: string[]) =>
  Array.from({ length: Math.ceil(keys.length / PER_STATEMENT) }, (_, i) =>
    keys.slice(i * PER_STATEMENT, (i + 1) * PER_STATEMENT),
  );

/** At an end, before the prefix is deleted around them: `keys` stay until ENDED_BODY_KEEP_MS from `now`. */
export async function keepEndedBodies(db: D1Database, keys: string[], now: number): Promise<void> {
  if (!keys.length) return;
  const deleteAfter = now + ENDED_BODY_KEEP_MS;
  await db.batch(
    chunksOf(keys).map((chunk) =>
      db
        .prepare(
          `INSERT INTO ended_bodies (key, delete_after) VALUES ${chunk.map(() => "(?, ?)").join(", ")} ` +
            "ON CONFLICT (key) DO UPDATE SET delete_after = MAX(delete_after, excluded.delete_after)",
        )
        .bind(...chunk.flatMap((key) => [key, deleteAfter])),
    ),
  );
}

/** The daily sweep: deletes the bodies whose time is up, then their rows (a failed delete is tried the next day). */
export async function sweepEndedBodies(db: D1Database, bucket: R2Bucket, now: number): Promise<void> {
  for (;;) {
    const { results } = await db
      .prepare("SELECT key FROM ended_bodies WHERE delete_after < ? LIMIT ?")
      .bind(now, PER_SWEEP)
      .all<{ key: string }>();
    const keys = results.map((r) => r.key);
    if (!keys.length) return;
    await bucket.delete(keys);
    await db.batch(
      chunksOf(keys).map((chunk) =>
        db.prepare(`DELETE FROM ended_bodies WHERE key IN (${chunk.map(() => "?").join(", ")})`).bind(...chunk),
      ),
    );
    if (keys.length < PER_SWEEP) return;
  }
}
