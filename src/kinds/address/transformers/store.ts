/**
 * A transformer's current expressions (they can be replaced) and its log: one row per request, with what became of it.
 */
import { AppError } from "../../../http/errors";
import type { EngineStore } from "../../../kind/kind";
import { iso } from "../../../time";
import { MAX_MESSAGES, type Expressions } from "./schema";

export const TABLES = [
  "CREATE TABLE transformer_expressions (id INTEGER PRIMARY KEY CHECK (id = 1), expression TEXT NOT NULL, " +
    "headers_expression TEXT)",
  `CREATE TABLE transform_log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    received_at INTEGER NOT NULL,
    -- forwarded, skipped, failed
    outcome TEXT NOT NULL,
    error TEXT,
    delivery_id TEXT,
    input_bytes INTEGER NOT NULL,
    output_bytes INTEGER
  )`,
];

export function saveExpressions(sql: SqlStorage, e: Expressions): Expressions {
  sql.exec(
    "INSERT INTO transformer_expressions (id, expression, headers_expression) VALUES (1, ?, ?) ON CONFLICT " +
      "(id) DO UPDATE SET expression = excluded.expression, headers_expression = excluded.headers_expression",
    e.expression,
    e.headers_expression,
  );
  return e;
}

export const expressionsOf = (sql: SqlStorage): Expressions =>
  sql.exec<Expressions>("SELECT expression, headers_expression FROM transformer_expressions").one();

export function roomFor(sql: SqlStorage): void {
  if (sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM transform_log").one().n >= MAX_MESSAGES) {
    throw new AppError(
      "storage_full",
      `A transformer takes at most ${MAX_MESSAGES} requests in its life; use another.`,
    );
  }
}

export function log(
  store: EngineStore,
  e: {
    receivedAt: number;
    outcome: "forwarded" | "skipped" | "failed";
    error: string | null;
    deliveryId: string | null;
    inputBytes: number;
    outputBytes: number | null;
  },
): number {
  roomFor(store.sql);
  return store.sql
    .exec<{ seq: number }>(
      "INSERT INTO transform_log (received_at, outcome, error, delivery_id, input_bytes, output_bytes) " +
        "VALUES (?, ?, ?, ?, ?, ?) RETURNING seq",
      e.receivedAt,
      e.outcome,
      e.error,
      e.deliveryId,
      e.inputBytes,
      e.outputBytes,
    )
    .one().seq;
}

export function logPage(sql: SqlStorage, cursor: number, limit: number) {
  const rows = sql
    .exec<{
      seq: number;
      received_at: number;
      outcome: "forwarded" | "skipped" | "failed";
      error: string | null;
      delivery_id: string | null;
      input_bytes: number;
      output_bytes: number | null;
    }>("SELECT * FROM transform_log WHERE seq > ? ORDER BY seq LIMIT ?", cursor, limit + 1)
    .toArray();
  const page = rows.slice(0, limit);
  return {
    items: page.map((r) => ({ ...r, received_at: iso(r.received_at) })),
    next_cursor: rows.length > limit ? String(page[page.length - 1]!.seq) : null,
  };
}

export function counts(sql: SqlStorage): { forwarded: number; skipped: number; failed: number } {
  const out = { forwarded: 0, skipped: 0, failed: 0 };
  for (const r of sql
    .exec<{ outcome: keyof typeof out; n: number }>("SELECT outcome, COUNT(*) AS n FROM transform_log GROUP BY outcome")
    .toArray())
    out[r.outcome] = r.n;
  return out;
}
