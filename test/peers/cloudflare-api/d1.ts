/**
 * D1 as wrangler 4.86 uses it for setup and deploy: list, create, get, and the query endpoint that
 * `d1 execute --remote --command` and `d1 migrations apply --remote` post SQL to. The SQL is not run: the
 * stand-in keeps wrangler's d1_migrations table (create, insert, select) and records the rest.
 */
import { notFound, now, newId, route, jsonBody, type D1Database, type Route } from "./state";

const view = (db: D1Database) => ({
  uuid: db.uuid,
  name: db.name,
  created_at: db.created_at,
  version: "production",
  num_tables: 0,
  file_size: 0,
  running_in_region: "WEUR",
});
const meta = {
  served_by: "stand-in",
  duration: 0.1,
  changes: 0,
  last_row_id: 0,
  changed_db: false,
  size_after: 0,
  rows_read: 0,
  rows_written: 0,
};

/** Answers one query text: the rows of `SELECT … FROM d1_migrations`, or none. */
function run(db: D1Database, sql: string): { results: Record<string, unknown>[] } | { error: string } {
  db.queries.push(sql);
  if (/CREATE TABLE IF NOT EXISTS d1_migrations/i.test(sql)) db.migrations ??= [];
  for (const [, name] of sql.matchAll(/INSERT INTO d1_migrations \(name\)\s*values\s*\('([^']+)'\)/gi)) {
    if (!db.migrations) throw new Error("no such table: d1_migrations");
    db.migrations.push(name!);
  }
  if (/^\s*SELECT\b[\s\S]*FROM d1_migrations/i.test(sql)) {
    if (!db.migrations) return { error: "no such table: d1_migrations: SQLITE_ERROR" };
    return { results: db.migrations.map((name, i) => ({ id: i + 1, name, applied_at: "2026-01-01 00:00:00" })) };
  }
  return { results: [] };
}

export const d1Routes: Route[] = [
  route("GET", "/d1/database", ({ account, query }) => {
    const all = [...account.d1.values()].filter((db) => !query.get("name") || db.name === query.get("name"));
    const perPage = Number(query.get("per_page") ?? 10);
    const page = Number(query.get("page") ?? 1);
    return {
      result: all.slice((page - 1) * perPage, page * perPage).map(view),
      resultInfo: { page, per_page: perPage, count: all.length, total_count: all.length },
    };
  }),
  route("POST", "/d1/database", ({ account, body, entry }) => {
    const { name } = jsonBody<{ name: string }>(body);
    entry.summary = `create ${name}`;
    if ([...account.d1.values()].some((db) => db.name === name))
      return { status: 400, errors: [{ code: 7502, message: "A database with that name already exists" }] };
    const db: D1Database = { uuid: newId(), name, created_at: now(), migrations: null, queries: [] };
    account.d1.set(db.uuid, db);
    return { result: { ...view(db), created_in_region: "WEUR" } };
  }),
  route("GET", "/d1/database/:id", ({ account, params }) => {
    const db = account.d1.get(params.id!) ?? [...account.d1.values()].find((d) => d.name === params.id);
    return db ? { result: view(db) } : notFound(7404, "The database could not be found");
  }),
  route("POST", "/d1/database/:id/query", ({ account, params, body, entry }) => {
    const db = account.d1.get(params.id!);
    if (!db) return notFound(7404, "The database could not be found");
    const { sql } = jsonBody<{ sql: string }>(body);
    const applied = [...sql.matchAll(/INSERT INTO d1_migrations \(name\)\s*values\s*\('([^']+)'\)/gi)].map((m) => m[1]);
    entry.summary = applied.length ? `migration ${applied.join(", ")}` : sql.replace(/\s+/g, " ").trim().slice(0, 200);
    entry.mutating = !/^\s*SELECT\b/i.test(sql);
    const answer = run(db, sql);
    if ("error" in answer) return { status: 400, errors: [{ code: 7500, message: answer.error }] };
    return { result: [{ results: answer.results, success: true, meta }] };
  }),
];
