/**
 * Reads a table that may not exist yet (made on first use, or by a migration the object has not
 * run): asking SQLite and catching its "no such table" costs one statement, where looking the name
 * up in sqlite_master reads every row of the schema.
 */
export function orIfMissing<T>(table: string, run: () => T, none: T): T {
  try {
    return run();
  } catch (err) {
    if (err instanceof Error && err.message.includes(`no such table: ${table}`)) return none;
    throw err;
  }
}
