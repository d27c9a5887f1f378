/**
 * The test clock: a resource's clock may run ahead of the real one, by an offset kept in its
 * storage, so a test can let a day pass (expiry, timers, notices) without waiting and without
 * rewriting the kind's tables. Moving it is refused unless ENVIRONMENT is "test".
 */
import type { Env } from "../../src/env";
import { orIfMissing } from "./missing-table";

const TABLE = "CREATE TABLE IF NOT EXISTS test_clock (id INTEGER PRIMARY KEY CHECK (id = 1), offset_ms INTEGER NOT NULL)";

/** Read when every object starts, in production too, where the table never exists. */
export function readClockOffset(sql: SqlStorage): number {
  return orIfMissing("test_clock", () => sql.exec<{ offset_ms: number }>("SELECT offset_ms FROM test_clock").toArray()[0]?.offset_ms ?? 0, 0);
}

/** Moves the offset `ms` further ahead (never back); answers the new offset. */
export function advanceClockOffset(env: Env, sql: SqlStorage, ms: number): number {
  if (env.ENVIRONMENT !== "test") throw new Error("The test clock can be moved only when ENVIRONMENT is test.");
  if (!Number.isSafeInteger(ms) || ms < 0) throw new Error("The test clock moves forward by a whole number of milliseconds.");
  const offset = readClockOffset(sql) + ms;
  sql.exec(TABLE);
  sql.exec("INSERT INTO test_clock (id, offset_ms) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET offset_ms = excluded.offset_ms", offset);
  return offset;
}
