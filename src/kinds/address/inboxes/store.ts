/**
 * An inbox's items inside its ResourceObject: one row per request, in arrival order (the seq),
 * with the body inline (up to 128 KiB, while the inline budget lasts) or as the key of an R2
 * object. A stats row keeps the counts the limits check on every arrival, so ingest reads one
 * row, not the table.
 */
import { AppError } from "../../../http/errors";
import type { EngineStore } from "../../../resources/kind";
import { toBase64 } from "../../../bytes";
import { iso, isoOrNull } from "../../../time";
import { MAX_BATCH, MAX_BYTES, MAX_ITEMS, MAX_PULL_BODY_BYTES, type Item } from "./schema";

/**
 * Bytes of bodies kept in SQLite, and of the other fields of all items: together they keep the export
 * (every item, small bodies inline) well below the 32 MiB of one Durable Object answer. Past the first,
 * bodies go to R2 (public.ts); past the second, the inbox is full.
 */
export const INLINE_BODY_BUDGET = 8 * 1024 * 1024;
export const METADATA_BUDGET = 12 * 1024 * 1024;

export const TABLES = [
  `CREATE TABLE inbox_items (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    received_at INTEGER NOT NULL,
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
  "CREATE INDEX inbox_pending ON inbox_items (seq) WHERE acked_at IS NULL",
  `CREATE TABLE inbox_stats (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    items INTEGER NOT NULL, pending INTEGER NOT NULL, bytes INTEGER NOT NULL,
    inline_bytes INTEGER NOT NULL, metadata_bytes INTEGER NOT NULL
  )`,
  "INSERT INTO inbox_stats VALUES (1, 0, 0, 0, 0, 0)",
  "CREATE TABLE inbox_secret (id INTEGER PRIMARY KEY CHECK (id = 1), sealed TEXT NOT NULL)",
];

type Stats = { items: number; pending: number; bytes: number; inline_bytes: number; metadata_bytes: number };

export const statsOf = (store: Pick<EngineStore, "sql">): Stats =>
  store.sql.exec<Stats>("SELECT items, pending, bytes, inline_bytes, metadata_bytes FROM inbox_stats").one();

export function saveSecret(store: EngineStore, sealed: string): void {
  store.sql.exec("INSERT INTO inbox_secret (id, sealed) VALUES (1, ?)", sealed);
}

export function sealedSecret(sql: SqlStorage): string | null {
  return sql.exec<{ sealed: string }>("SELECT sealed FROM inbox_secret").toArray()[0]?.sealed ?? null;
}

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
  verified: boolean | null;
  verificationError: string | null;
}

/** Refuses (507) what would pass the inbox's limits; `size` is the new body's. */
export function checkRoom(stats: Stats, size: number, metadata: number): void {
  const full = (what: string) => new AppError("storage_full", `This inbox is full: ${what}. Ack and let it expire, or use another inbox.`);
  if (stats.items >= MAX_ITEMS) throw full(`it keeps at most ${MAX_ITEMS} requests`);
  if (stats.bytes + size > MAX_BYTES) throw full(`it keeps at most ${MAX_BYTES} bytes of bodies`);
  if (stats.metadata_bytes + metadata > METADATA_BUDGET) throw full(`it keeps at most ${METADATA_BUDGET} bytes of headers, paths and queries`);
}

export function insert(store: EngineStore, a: Arrival): number {
  const query = JSON.stringify(a.query);
  const headers = JSON.stringify(a.headers);
  const metadata = query.length + headers.length + a.path.length;
  checkRoom(statsOf(store), a.size, metadata);
  const seq = store.sql
    .exec<{ seq: number }>(
      `INSERT INTO inbox_items (received_at, method, path, query, headers, client_ip, content_type, size, sha256, body, body_key, verified, verification_error)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
      a.receivedAt, a.method, a.path, query, headers, a.clientIp, a.headers["content-type"] ?? null, a.size, a.sha256,
      a.body, a.bodyKey, a.verified === null ? null : Number(a.verified), a.verificationError,
    )
    .one().seq;
  store.sql.exec(
    "UPDATE inbox_stats SET items = items + 1, pending = pending + 1, bytes = bytes + ?, inline_bytes = inline_bytes + ?, metadata_bytes = metadata_bytes + ?",
    a.size, a.body?.length ?? 0, metadata,
  );
  return seq;
}

type Row = {
  seq: number; received_at: number; method: string; path: string; query: string; headers: string; client_ip: string | null;
  content_type: string | null; size: number; sha256: string; body: ArrayBuffer | null; body_key: string | null;
  verified: number | null; verification_error: string | null; acked_at: number | null;
};

const COLUMNS = "seq, received_at, method, path, query, headers, client_ip, content_type, size, sha256, body, body_key, verified, verification_error, acked_at";

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function view(store: EngineStore, row: Row): Item {
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
    verified: row.verified === null ? null : row.verified === 1,
    verification_error: row.verification_error,
    acked_at: isoOrNull(row.acked_at),
  };
}

/** Whether a pull after `cursor` has anything to give (the long-poll's condition). */
export function anyPendingAfter(sql: SqlStorage, cursor: number): boolean {
  return sql.exec("SELECT 1 FROM inbox_items WHERE acked_at IS NULL AND seq > ? LIMIT 1", cursor).toArray().length > 0;
}

export function pull(store: EngineStore, input: { cursor?: string; limit: number }) {
  const after = Number(input.cursor ?? 0);
  const rows = store.sql.exec<Row>(`SELECT ${COLUMNS} FROM inbox_items WHERE acked_at IS NULL AND seq > ? ORDER BY seq LIMIT ?`, after, input.limit).toArray();
  const items: Item[] = [];
  let bodyBytes = 0;
  for (const row of rows) {
    const inline = row.body_key === null ? row.size : 0;
    if (items.length > 0 && bodyBytes + inline > MAX_PULL_BODY_BYTES) break;
    bodyBytes += inline;
    items.push(view(store, row));
  }
  const last = items[items.length - 1];
  return { items, next_cursor: last ? String(last.seq) : (input.cursor ?? null) };
}

export function get(store: EngineStore, seq: number): Item {
  const row = store.sql.exec<Row>(`SELECT ${COLUMNS} FROM inbox_items WHERE seq = ?`, seq).toArray()[0];
  if (!row) throw new AppError("not_found", `This inbox holds no item ${seq}.`);
  return view(store, row);
}

export function ack(store: EngineStore, input: { seqs?: number[]; through?: number }) {
  if (input.seqs && input.seqs.length > MAX_BATCH) throw new AppError("validation_failed", `Ack at most ${MAX_BATCH} items at once.`);
  const acked = (
    input.seqs
      ? store.sql.exec(`UPDATE inbox_items SET acked_at = ? WHERE acked_at IS NULL AND seq IN (${input.seqs.map(() => "?").join(",")}) RETURNING seq`, store.now, ...input.seqs)
      : store.sql.exec("UPDATE inbox_items SET acked_at = ? WHERE acked_at IS NULL AND seq <= ? RETURNING seq", store.now, input.through!)
  ).toArray().length;
  store.sql.exec("UPDATE inbox_stats SET pending = pending - ?", acked);
  return { acked, pending: statsOf(store).pending };
}

export function info(store: EngineStore) {
  const stats = statsOf(store);
  const last = store.sql.exec<{ seq: number | null }>("SELECT MAX(seq) AS seq FROM inbox_items").one().seq ?? 0;
  return { pending: stats.pending, acked: stats.items - stats.pending, bytes: stats.bytes, last_seq: last };
}

/** Every item, acked ones too, in arrival order. */
export function all(store: EngineStore): Item[] {
  return store.sql.exec<Row>(`SELECT ${COLUMNS} FROM inbox_items ORDER BY seq`).toArray().map((row) => view(store, row));
}
