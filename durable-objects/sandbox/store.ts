/**
 * A SandboxObject's SQLite: the sandbox's row (its clock offset, its real-time end), the resources
 * that joined it, and its timeline. Every method is synchronous, inside one Durable Object event.
 */
import type { Json } from "../../src/json";
import type { LoggedDelivery, LoggedRequest, SandboxDeliveries, SandboxEvent } from "../../src/rpc/sandbox";
import { MAX_LOGGED_DELIVERIES, MAX_TIMELINE_EVENTS } from "../../src/sandbox/limits";

export const SANDBOX_SCHEMA = `
CREATE TABLE IF NOT EXISTS sandbox (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  sandbox_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  token_id TEXT NOT NULL,
  label TEXT,
  -- Real time (Unix ms): made, and when it ends with all its resources.
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  -- How far the sandbox's clock runs ahead of the real one; its resources take it.
  offset_ms INTEGER NOT NULL DEFAULT 0,
  ended_at INTEGER,
  -- send: deliveries go to their targets; log: into deliveries_log below, instead.
  deliveries TEXT NOT NULL DEFAULT 'send'
);
CREATE TABLE IF NOT EXISTS members (
  resource_id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  -- 1 once the resource answered that it is gone (ended, or its creation undone).
  gone INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  at INTEGER NOT NULL,
  resource_id TEXT,
  kind TEXT,
  type TEXT NOT NULL,
  detail TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS deliveries_log (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  at INTEGER NOT NULL,
  resource_id TEXT NOT NULL,
  delivery_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  method TEXT NOT NULL,
  url TEXT NOT NULL,
  headers TEXT NOT NULL,
  body TEXT,
  body_bytes INTEGER,
  body_sha256 TEXT,
  body_withheld INTEGER NOT NULL DEFAULT 0
);
`;

/** Columns added since a sandbox's first layout: each added once, to a table made before it. */
const ADDED_COLUMNS: [table: string, column: string, definition: string][] = [
  ["sandbox", "deliveries", "TEXT NOT NULL DEFAULT 'send'"],
];

/** Makes the tables, and brings a table of an older layout up to this one. */
export function migrateSandbox(sql: SqlStorage): void {
  sql.exec(SANDBOX_SCHEMA);
  for (const [table, column, definition] of ADDED_COLUMNS) {
    const has = sql.exec<{ name: string }>(`SELECT name FROM pragma_table_info('${table}')`).toArray();
    if (!has.some((c) => c.name === column)) sql.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${definition}`);
  }
}

export type SandboxRow = {
  sandbox_id: string;
  account_id: string;
  token_id: string;
  label: string | null;
  created_at: number;
  expires_at: number;
  offset_ms: number;
  ended_at: number | null;
  deliveries: SandboxDeliveries;
};

type EventRow = {
  seq: number;
  at: number;
  resource_id: string | null;
  kind: string | null;
  type: string;
  detail: string;
};

export class SandboxStore {
  constructor(private readonly sql: SqlStorage) {}

  row(): SandboxRow | null {
    return this.sql.exec<SandboxRow>("SELECT * FROM sandbox").toArray()[0] ?? null;
  }

  insert(row: SandboxRow): void {
    this.sql.exec(
      "INSERT INTO sandbox (id, sandbox_id, account_id, token_id, label, created_at, expires_at, " +
        "offset_ms, ended_at, deliveries) VALUES (1, ?, ?, ?, ?, ?, ?, ?, NULL, ?)",
      row.sandbox_id,
      row.account_id,
      row.token_id,
      row.label,
      row.created_at,
      row.expires_at,
      row.offset_ms,
      row.deliveries,
    );
  }

  setOffset(offset: number): void {
    this.sql.exec("UPDATE sandbox SET offset_ms = max(offset_ms, ?)", offset);
  }

  markEnded(at: number): void {
    this.sql.exec("UPDATE sandbox SET ended_at = ? WHERE ended_at IS NULL", at);
  }

  /** The resources still in the sandbox, in the order they joined. */
  members(): { resource_id: string; kind: string }[] {
    return this.sql
      .exec<{ resource_id: string; kind: string }>(
        "SELECT resource_id, kind FROM members WHERE gone = 0 ORDER BY rowid",
      )
      .toArray();
  }

  /** The kind of a resource still in the sandbox; null for one that is not (or no longer). */
  memberKind(resourceId: string): string | null {
    return (
      this.sql
        .exec<{ kind: string }>("SELECT kind FROM members WHERE resource_id = ? AND gone = 0", resourceId)
        .toArray()[0]?.kind ?? null
    );
  }

  isMember(resourceId: string): boolean {
    return this.sql.exec("SELECT 1 FROM members WHERE resource_id = ? AND gone = 0", resourceId).toArray().length > 0;
  }

  addMember(resourceId: string, kind: string): void {
    this.sql.exec(
      "INSERT INTO members (resource_id, kind) VALUES (?, ?) ON CONFLICT (resource_id) DO NOTHING",
      resourceId,
      kind,
    );
  }

  markGone(resourceId: string): void {
    this.sql.exec("UPDATE members SET gone = 1 WHERE resource_id = ?", resourceId);
  }

  record(events: SandboxEvent[]): void {
    for (const e of events)
      this.sql.exec(
        "INSERT INTO events (at, resource_id, kind, type, detail) VALUES (?, ?, ?, ?, ?)",
        e.at,
        e.resource_id,
        e.kind,
        e.type,
        JSON.stringify(e.detail),
      );
    // The newest MAX_TIMELINE_EVENTS stay: a long run of probes must not grow the object without bound.
    if (events.length)
      this.sql.exec("DELETE FROM events WHERE seq <= (SELECT max(seq) FROM events) - ?", MAX_TIMELINE_EVENTS);
  }

  eventCount(): number {
    return this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM events").one().n;
  }

  /** Events after `seq` in the order they happened, and the cursor of the next page. */
  events(after: number, limit: number): { items: SandboxEvent[]; next: number | null } {
    const rows = this.sql
      .exec<EventRow>("SELECT * FROM events WHERE seq > ? ORDER BY seq LIMIT ?", after, limit + 1)
      .toArray();
    const page = rows.slice(0, limit);
    return {
      items: page.map((r) => ({
        at: r.at,
        resource_id: r.resource_id,
        kind: r.kind,
        type: r.type,
        detail: JSON.parse(r.detail) as Json,
      })),
      next: rows.length > limit ? page[page.length - 1]!.seq : null,
    };
  }

  /** Keeps a request the sandbox's resource would have sent, at `at`; answers its number in the log. */
  logDelivery(at: number, r: LoggedRequest): number {
    this.sql.exec(
      `INSERT INTO deliveries_log (at, resource_id, delivery_id, event_type, method, url, headers, body, body_bytes,
           body_sha256, body_withheld)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      at,
      r.resource_id,
      r.delivery_id,
      r.event_type,
      r.method,
      r.url,
      JSON.stringify(r.headers),
      r.body,
      r.body_bytes,
      r.body_sha256,
      r.body_withheld ? 1 : 0,
    );
    const seq = this.sql.exec<{ seq: number }>("SELECT last_insert_rowid() AS seq").one().seq;
    // The newest MAX_LOGGED_DELIVERIES stay, as the timeline's newest events do.
    this.sql.exec("DELETE FROM deliveries_log WHERE seq <= ?", seq - MAX_LOGGED_DELIVERIES);
    return seq;
  }

  /** Logged requests after `seq`, oldest first, and the cursor of the next page. */
  loggedDeliveries(after: number, limit: number): { items: LoggedDelivery[]; next: number | null } {
    type Row = Omit<LoggedDelivery, "headers" | "body_withheld"> & { headers: string; body_withheld: number };
    const rows = this.sql
      .exec<Row>("SELECT * FROM deliveries_log WHERE seq > ? ORDER BY seq LIMIT ?", after, limit + 1)
      .toArray();
    const page = rows.slice(0, limit);
    return {
      items: page.map((r) => ({
        ...r,
        headers: JSON.parse(r.headers) as Record<string, string>,
        body_withheld: r.body_withheld === 1,
      })),
      next: rows.length > limit ? page[page.length - 1]!.seq : null,
    };
  }
}
