/**
 * Counts the SQLite rows a resource's operations (or alarms) read and write, so a test can show that
 * an operation seeks an index instead of scanning, or what a timer's run costs: unlike a latency, the count does
 * not depend on how busy the machine is. The Durable Object's SqlStorage has its exec
 * shadowed in place (tests and objects share an isolate under the vitest pool), for as
 * long as that object instance lives.
 */
import { env, runInDurableObject } from "cloudflare:test";

export interface RowsRead {
  /** Rows read by the SQL statements `work` caused in the object. */
  during(work: () => Promise<unknown>): Promise<number>;
  /** Rows read and written by them (a write's index updates included, as SQLite counts them). */
  rows(work: () => Promise<unknown>): Promise<{ read: number; written: number }>;
}

export async function watchRowsRead(resourceId: string): Promise<RowsRead> {
  const cursors: SqlStorageCursor<Record<string, SqlStorageValue>>[] = [];
  const stub = env.RESOURCES.get(env.RESOURCES.idFromName(resourceId));
  await runInDurableObject(stub, (_obj, state) => {
    // The object's parts share the storage's one SqlStorage: its exec is shadowed on that instance.
    const sql = state.storage.sql;
    const exec = sql.exec.bind(sql);
    Object.defineProperty(sql, "exec", {
      configurable: true,
      value: (query: string, ...bindings: SqlStorageValue[]) => {
        const cursor = exec(query, ...bindings);
        cursors.push(cursor);
        return cursor;
      },
    });
  });
  const rows = async (work: () => Promise<unknown>) => {
    cursors.length = 0;
    await work();
    // Cursors belong to the object's I/O context: they are read there.
    return runInDurableObject(stub, () => ({
      read: cursors.reduce((sum, c) => sum + c.rowsRead, 0),
      written: cursors.reduce((sum, c) => sum + c.rowsWritten, 0),
    }));
  };
  return { rows, during: async (work) => (await rows(work)).read };
}
