/**
 * The answers of operations called under an Idempotency-Key, kept by the resource in the transaction of their work
 * (docs/operations.md#idempotency-key). The worker keeps a key's answer in D1 after the call; when the runtime dies
 * between the two, the key's lock lapses and the caller's retry would run the operation again, charged again. The
 * retry names the same replay key (derived from the key and the request, src/resources/op-route.ts), so the
 * object answers it with what the first run answered, changing and charging nothing. Kept as long as the worker keeps
 * a key; an answer over MAX_KEPT_BYTES is not kept (the worker's own copy is then the only one).
 *
 * Sealed with the request's own secret, as the worker's copy is: an answer may hold a secret (a rotated credential),
 * and only the retry of the same request under the same key can derive what opens it.
 */
import { REPLAY_WINDOW_MS } from "../../src/http/idempotency-store";
import { sealing } from "../../src/auth/sealing-loader";
import type { Json } from "../../src/json";
import type { Replay } from "../../src/rpc/resource";

const MAX_KEPT_BYTES = 64 * 1024;

// IF NOT EXISTS: objects of the day before this was a migration made the table when they first kept an answer.
export const KEPT_ANSWERS_TABLE =
  "CREATE TABLE IF NOT EXISTS kept_answers (replay_key TEXT PRIMARY KEY, answer TEXT NOT NULL, at INTEGER)";

/** The answer kept for `replay`, or undefined. */
export function keptAnswer(sql: SqlStorage, replay: Replay): Json | undefined {
  const row = sql
    .exec<{ answer: string }>("SELECT answer FROM kept_answers WHERE replay_key = ?", replay.key)
    .toArray()[0];
  if (!row) return undefined;
  try {
    return JSON.parse(sealing().unsealWith(replay.secret, row.answer)) as Json;
  } catch {
    return undefined; // kept in clear before answers were sealed: not to be trusted, the key's own copy decides
  }
}

/** Keeps `answer` for `replay`, in the caller's transaction; drops the answers older than a key is kept. */
export function keepAnswer(sql: SqlStorage, replay: Replay, answer: Json): void {
  const text = JSON.stringify(answer);
  if (text.length > MAX_KEPT_BYTES) return;
  // Real time, as the worker's keys count it.
  const now = Date.now();
  sql.exec("DELETE FROM kept_answers WHERE at < ?", now - REPLAY_WINDOW_MS);
  sql.exec(
    "INSERT OR REPLACE INTO kept_answers VALUES (?, ?, ?)",
    replay.key,
    sealing().sealWith(replay.secret, text),
    now,
  );
}
