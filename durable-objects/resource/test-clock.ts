/**
 * A resource's clock offset: its clock may run ahead of the real one, by an offset kept in its
 * storage, so a day can pass (expiry, timers, notices) without waiting and without rewriting the
 * kind's tables. Two things move it, never back: the tests (advanceClockOffset, refused unless
 * ENVIRONMENT is "test"), and the sandbox the resource belongs to (sandbox-clock.ts), in any
 * environment, for that sandbox's resources only.
 */
import type { Env } from "../../src/env";
import { orIfMissing } from "./missing-table";

const TABLE =
  "CREATE TABLE IF NOT EXISTS test_clock (id INTEGER PRIMARY KEY CHECK (id = 1), offset_ms INTEGER NOT NULL)";

/** Read when every object starts, in production too, where the table exists only in a sandbox's resources. */
export function readClockOffset(sql: SqlStorage): number {
  return orIfMissing(
    "test_clock",
    () => sql.exec<{ offset_ms: number }>("SELECT offset_ms FROM test_clock").toArray()[0]?.offset_ms ?? 0,
    0,
  );
}

/** Sets the offset to `offset` unless it is already further ahead; answers the offset now kept. */
export function moveClockOffsetTo(sql: SqlStorage, offset: number): number {
  if (!Number.isSafeInteger(offset)) throw new Error("A clock offset is a whole number of milliseconds.");
  const kept = Math.max(readClockOffset(sql), offset);
  sql.exec(TABLE);
  sql.exec(
    "INSERT INTO test_clock (id, offset_ms) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET offset_ms = " +
      "excluded.offset_ms",
    kept,
  );
  return kept;
}

/** Moves the offset `ms` further ahead (never back); answers the new offset. */
export function advanceClockOffset(env: Env, sql: SqlStorage, ms: number): number {
  if (env.ENVIRONMENT !== "test") throw new Error("The test clock can be moved only when ENVIRONMENT is test.");
  if (!Number.isSafeInteger(ms) || ms < 0)
    throw new Error("The test clock moves forward by a whole number of milliseconds.");
  return moveClockOffsetTo(sql, readClockOffset(sql) + ms);
}
