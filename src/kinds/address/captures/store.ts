/**
 * Requests kept at an address (inboxes, bins, handshakes), inside the resource's object: one row
 * per request, in arrival order (the seq), with the body inline (up to 128 KiB, while the inline
 * budget lasts) or as the key of an R2 object. A stats row keeps the counts the limits check on
 * every arrival, so ingest reads one row, not the table.
 */
import { AppError } from "../../../http/errors";
import type { EngineStore } from "../../../kind/kind";
import { toBase64 } from "../../../bytes";
import { iso, isoOrNull } from "../../../time";
import type { Capture } from "./schema";

/**
 * Bytes of bodies kept in SQLite, and of the other fields of all captures: together they keep the
 * export (every capture, small bodies inline) well below the 32 MiB of one Durable Object answer.
 * Past the first, bodies go to R2 (ingest.ts); past the second, the resource is full.
 */
export const INLINE_BODY_BUDGET = 8 * 1024 * 1024;
export const METADATA_BUDGET = 12 * 1024 * 1024;

/** Body bytes one page of captures carries inline: past this the page ends early (the next page has the rest). */
export const MAX_PAGE_BODY_BYTES = 8 * 1024 * 1024;

/** What one resource keeps, published in its kind's limits. */
export interface CaptureLimits {
  /** What the resource is called in errors ("inbox", "bin"). */
  noun: string;
  maxItems: number;
  maxBytes: number;
}

export const TABLES = [
  `CREATE TABLE captures (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    received_at INTEGER NOT NULL,
    stored_at INTEGER NOT NULL,
    method TEXT NOT NULL,
    path TEXT NOT NULL,
    query TEXT NOT NULL,
    headers TEXT NOT NULL,
    client_ip TEXT,
    content_type TEXT,
    size INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    body BLOB,
    body_key TEXT,
    verified INTEGER,
    verification_error TEXT,
    acked_at INTEGER
  )`,
  "CREATE INDEX captures_pending ON captures (seq) WHERE acked_at IS NULL",
  `CREATE TABLE capture_stats (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    items INTEGER NOT NULL, pending INTEGER NOT NULL, bytes INTEGER NOT NULL,
    inline_bytes INTEGER NOT NULL, metadata_bytes INTEGER NOT NULL
  )`,
  "INSERT INTO capture_stats VALUES (1, 0, 0, 0, 0, 0)",
];

export type Stats = { items: number; pending: number; bytes: number; inline_bytes: number; metadata_bytes: number };

export const statsOf = (sql: SqlStorage): Stats =>
  sql.exec<Stats>("SELECT items, pending, bytes, inline_bytes, metadata_bytes FROM capture_stats").one();

export interface Arrival {
  receivedAt: number;
  method: string;
  path: string;
  query: [string, string][];
  headers: Record<string, string>;
  clientIp: string | null;
  size: number;
  sha256: string;
  body: Uint8Array | null;
  bodyKey: string | null;
  verified?: boolean | null;
  verificationError?: string | null;
}

/** Refuses (507) what would pass the resource's limits; `size` is the new body's. */
export function checkRoom(limits: CaptureLimits, stats: Stats, size: number, metadata: number): void {
  const full = (what: string) =>
    new AppError("storage_full", `This ${limits.noun} is full: ${what}. Make room or use another ${limits.noun}.`);
  if (stats.items >= limits.maxItems) throw full(`it keeps at most ${limits.maxItems} requests`);
  if (stats.bytes + size > limits.maxBytes) throw full(`it keeps at most ${limits.maxBytes} bytes of bodies`);
  if (stats.metadata_bytes + metadata > METADATA_BUDGET)
    throw full(`it keeps at most ${METADATA_BUDGET} bytes of headers, paths and queries`);
}

export function insert(store: EngineStore, limits: CaptureLimits, a: Arrival): number {
  const query = JSON.stringify(a.query);
  const headers = JSON.stringify(a.headers);
  const metadata = query.length + headers.length + a.path.length;
  // The counts move and the limits are checked in one statement (ingest's hot path): no row
  // changed means a limit would be passed, and only then are the counts read to say which.
  const counted = store.sql.exec(
    `UPDATE capture_stats SET items = items + 1, pending = pending + 1, bytes = bytes + ?,
         inline_bytes = inline_bytes + ?, metadata_bytes = metadata_bytes + ?
     WHERE items < ? AND bytes + ? <= ? AND metadata_bytes + ? <= ?`,
    a.size,
    a.body?.length ?? 0,
    metadata,
    limits.maxItems,
    a.size,
    limits.maxBytes,
    metadata,
    METADATA_BUDGET,
  ).rowsWritten;
  if (!counted) {
    checkRoom(limits, statsOf(store.sql), a.size, metadata);
    throw new Error("capture_stats refused a row that fits");
  }
  const verified = a.verified === undefined || a.verified === null ? null : Number(a.verified);
  return store.sql
    .exec<{ seq: number }>(
      `INSERT INTO captures (received_at, stored_at, method, path, query, headers, client_ip, content_type, size,
           sha256, body, body_key, verified, verification_error)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
      a.receivedAt,
      Math.max(store.now, a.receivedAt),
      a.method,
      a.path,
      query,
      headers,
      a.clientIp,
      a.headers["content-type"] ?? null,
      a.size,
      a.sha256,
      a.body,
      a.bodyKey,
      verified,
      a.verificationError ?? null,
    )
    .one().seq;
}

export type Row = {
  seq: number;
  received_at: number;
  stored_at: number;
  method: string;
  path: string;
  query: string;
  headers: string;
  client_ip: string | null;
  content_type: string | null;
  size: number;
  sha256: string;
  body: ArrayBuffer | null;
  body_key: string | null;
  verified: number | null;
  verification_error: string | null;
  acked_at: number | null;
};

const COLUMNS =
  "seq, received_at, stored_at, method, path, query, headers, client_ip, content_type, size, sha256, body, " +
  "body_key, verified, verification_error, acked_at";

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** A capture as every kind shows it (its own fields come from the row: see `Row`). */
export function captureOf(store: EngineStore, row: Row): Capture {
  let text: string | null = null;
  let base64: string | null = null;
  if (row.body_key === null) {
    const bytes = new Uint8Array(row.body ?? new ArrayBuffer(0));
    try {
      text = strictUtf8.decode(bytes);
    } catch {
      base64 = toBase64(bytes);
    }
  }
  return {
    seq: row.seq,
    received_at: iso(row.received_at),
    duration_ms: row.stored_at - row.received_at,
    method: row.method,
    path: row.path,
    query: JSON.parse(row.query) as [string, string][],
    headers: JSON.parse(row.headers) as Record<string, string>,
    client_ip: row.client_ip,
    content_type: row.content_type,
    size: row.size,
    sha256: row.sha256,
    body_text: text,
    body_base64: base64,
    body_url: row.body_key === null ? null : store.downloadUrl(row.body_key),
  };
}

/** The ack state of a capture, for the kinds that pull and ack. */
export const ackedAt = (row: Row) => isoOrNull(row.acked_at);

/** Whether anything is pending after `cursor` (a long-poll's condition). */
export function anyPendingAfter(sql: SqlStorage, cursor: number): boolean {
  return sql.exec("SELECT 1 FROM captures WHERE acked_at IS NULL AND seq > ? LIMIT 1", cursor).toArray().length > 0;
}

/** Rows up to `limit`, ending early once their inline bodies pass MAX_PAGE_BODY_BYTES (one row at least). */
function page(rows: Row[]): Row[] {
  const out: Row[] = [];
  let bodyBytes = 0;
  for (const row of rows) {
    const inline = row.body_key === null ? row.size : 0;
    if (out.length > 0 && bodyBytes + inline > MAX_PAGE_BODY_BYTES) break;
    bodyBytes += inline;
    out.push(row);
  }
  return out;
}

/** Pending rows after `after`, oldest first (a pull). */
export const pendingAfter = (sql: SqlStorage, after: number, limit: number): Row[] =>
  page(
    sql
      .exec<Row>(
        `SELECT ${COLUMNS} FROM captures WHERE acked_at IS NULL AND seq > ? ORDER BY seq LIMIT ?`,
        after,
        limit,
      )
      .toArray(),
  );

/** Rows before `before` (all when null), newest first (a bin's list). */
export const newestBefore = (sql: SqlStorage, before: number | null, limit: number): Row[] =>
  page(
    sql
      .exec<Row>(
        `SELECT ${COLUMNS} FROM captures WHERE seq < ? ORDER BY seq DESC LIMIT ?`,
        before ?? Number.MAX_SAFE_INTEGER,
        limit,
      )
      .toArray(),
  );

export function rowOf(sql: SqlStorage, seq: number, noun: string): Row {
  const row = sql.exec<Row>(`SELECT ${COLUMNS} FROM captures WHERE seq = ?`, seq).toArray()[0];
  if (!row) throw new AppError("not_found", `This ${noun} holds no request ${seq}.`);
  return row;
}

/** Every row, oldest first (an export). */
export const allRows = (sql: SqlStorage): Row[] =>
  sql.exec<Row>(`SELECT ${COLUMNS} FROM captures ORDER BY seq`).toArray();

/** Acks by seq or through a seq; answers how many this call acked and how many stay pending. */
export function ack(store: EngineStore, input: { seqs?: number[]; through?: number }) {
  const acked = (
    input.seqs
      ? store.sql.exec(
          `UPDATE captures SET acked_at = ? WHERE acked_at IS NULL AND seq IN (` +
            `${input.seqs.map(() => "?").join(",")}) RETURNING seq`,
          store.now,
          ...input.seqs,
        )
      : store.sql.exec(
          "UPDATE captures SET acked_at = ? WHERE acked_at IS NULL AND seq <= ? RETURNING seq",
          store.now,
          input.through!,
        )
  ).toArray().length;
  store.sql.exec("UPDATE capture_stats SET pending = pending - ?", acked);
  return { acked, pending: statsOf(store.sql).pending };
}

export function counts(sql: SqlStorage) {
  const stats = statsOf(sql);
  const last = sql.exec<{ seq: number | null }>("SELECT MAX(seq) AS seq FROM captures").one().seq ?? 0;
  return { items: stats.items, pending: stats.pending, bytes: stats.bytes, last_seq: last };
}

/** Deletes every capture (their R2 bodies after the commit); seqs go on from where they were. */
export function clear(store: EngineStore): number {
  const keys = store.sql
    .exec<{ body_key: string }>("SELECT body_key FROM captures WHERE body_key IS NOT NULL")
    .toArray()
    .map((r) => r.body_key);
  const deleted = store.sql.exec("DELETE FROM captures RETURNING seq").toArray().length;
  store.sql.exec("UPDATE capture_stats SET items = 0, pending = 0, bytes = 0, inline_bytes = 0, metadata_bytes = 0");
  store.dropObjects(keys);
  return deleted;
}
