/**
 * Checkpoints inside their ResourceObject: a row per thread (its name, the last
 * seq it handed out, where it forked from) and a row per checkpoint (metadata,
 * the value inline when small, else the R2 key). A save runs in one transaction:
 * the expected_seq check, the insert, keep-last-N pruning and the resource's
 * limits commit together or not at all; pruned R2 objects go once it committed.
 */
import { AppError } from "../../../http/errors";
import { keysetPage } from "../../../kind/pages";
import { iso } from "../../../time";
import type { EngineStore } from "../../../kind/kind";
import { decodeValue, type Encoding } from "./content";
import { MAX_CHECKPOINTS, MAX_STORED_BYTES, type CheckpointsConfig, type SaveInput } from "./schema";

type ThreadRow = {
  id: number;
  name: string;
  last_seq: number;
  forked_from: string | null;
  created_at: number;
  updated_at: number;
};

export type CheckpointRow = {
  checkpoint_id: string;
  thread_id: number;
  thread: string;
  seq: number;
  parent_id: string | null;
  label: string | null;
  step: number | null;
  tags: string;
  encoding: Encoding;
  content_type: string;
  size: number;
  sha256: string;
  inline: ArrayBuffer | null;
  object_key: string | null;
  created_at: number;
};

/** What a save's asynchronous step produced: the value inline, or the R2 key it was written to. */
export interface PreparedSave {
  checkpointId: string;
  encoding: Encoding;
  contentType: string;
  size: number;
  sha256: string;
  inline: Uint8Array | null;
  key: string | null;
}

/** The module's tables as the kind's first migration creates them (see the kind's `migrations`). */
export const TABLES = [
  `CREATE TABLE cp_threads (
    id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE, last_seq INTEGER NOT NULL,
    forked_from TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)`,
  `CREATE TABLE cp_checkpoints (
    checkpoint_id TEXT PRIMARY KEY, thread_id INTEGER NOT NULL, seq INTEGER NOT NULL, parent_id TEXT,
    label TEXT, step INTEGER, tags TEXT NOT NULL, encoding TEXT NOT NULL, content_type TEXT NOT NULL,
    size INTEGER NOT NULL, sha256 TEXT NOT NULL, inline BLOB, object_key TEXT, created_at INTEGER NOT NULL,
    UNIQUE (thread_id, seq))`,
];

const SELECT_CHECKPOINT = "SELECT c.*, t.name AS thread FROM cp_checkpoints c JOIN cp_threads t ON t.id = c.thread_id";

function threadByName(sql: SqlStorage, name: string): ThreadRow | null {
  return sql.exec<ThreadRow>("SELECT * FROM cp_threads WHERE name = ?", name).toArray()[0] ?? null;
}

export function existingThread(sql: SqlStorage, name: string): ThreadRow {
  const thread = threadByName(sql, name);
  if (!thread)
    throw new AppError(
      "not_found",
      `No thread ${JSON.stringify(name)} here (nothing saved to it yet, or it was deleted).`,
    );
  return thread;
}

export function checkpointById(sql: SqlStorage, id: string): CheckpointRow | null {
  return sql.exec<CheckpointRow>(`${SELECT_CHECKPOINT} WHERE c.checkpoint_id = ?`, id).toArray()[0] ?? null;
}

export function latestOf(sql: SqlStorage, thread: ThreadRow): CheckpointRow | null {
  return (
    sql
      .exec<CheckpointRow>(`${SELECT_CHECKPOINT} WHERE c.thread_id = ? AND c.seq = ?`, thread.id, thread.last_seq)
      .toArray()[0] ?? null
  );
}

/**
 * The refusals a save can meet before anything is written: a lost expected_seq race (409) and a
 * parent that is not here (404). Checked by the asynchronous step, so a loser writes nothing to R2,
 * and again by the transaction, which alone is authoritative.
 */
export function checkSave(sql: SqlStorage, input: SaveInput): ThreadRow | null {
  const thread = threadByName(sql, input.thread);
  const current = thread?.last_seq ?? 0;
  if (input.expected_seq !== undefined && input.expected_seq !== current) {
    throw new AppError(
      "conflict",
      `Thread ${JSON.stringify(input.thread)} is at seq ${current}, not ${input.expected_seq}` +
        `: another save came first.`,
      {
        extra: { current_seq: current, latest_id: thread ? (latestOf(sql, thread)?.checkpoint_id ?? null) : null },
      },
    );
  }
  if (input.parent_id !== undefined && !checkpointById(sql, input.parent_id)) {
    throw new AppError(
      "not_found",
      `No checkpoint ${input.parent_id} here to continue from (never saved, pruned, or its thread deleted).`,
    );
  }
  return thread;
}

/** Refuses what would take the resource past its limits (checked after pruning, inside the transaction). */
function checkRoom(sql: SqlStorage): void {
  const held = sql
    .exec<{ n: number; bytes: number }>("SELECT count(*) AS n, coalesce(sum(size), 0) AS bytes FROM cp_checkpoints")
    .one();
  if (held.n > MAX_CHECKPOINTS) {
    throw new AppError(
      "validation_failed",
      `This resource keeps at most ${MAX_CHECKPOINTS} checkpoints over all threads: delete a thread, or ` +
        `use another resource.`,
      {
        errors: [{ path: "thread", message: `at most ${MAX_CHECKPOINTS} checkpoints per resource` }],
      },
    );
  }
  if (held.bytes > MAX_STORED_BYTES) {
    throw new AppError(
      "payload_too_large",
      `This resource keeps at most ${MAX_STORED_BYTES} bytes of checkpoints; this one would take it to ${held.bytes}.`,
    );
  }
}

export function save(store: EngineStore, config: CheckpointsConfig, input: SaveInput, p: PreparedSave) {
  const sql = store.sql;
  const existing = checkSave(sql, input);
  // Without parent_id a checkpoint continues the thread; a new thread's first one may fork from elsewhere.
  const parent = input.parent_id ?? (existing ? (latestOf(sql, existing)?.checkpoint_id ?? null) : null);
  const thread = existing ?? insertThread(store, input.thread, parent);
  const seq = thread.last_seq + 1;
  sql.exec(
    `INSERT INTO cp_checkpoints (checkpoint_id, thread_id, seq, parent_id, label, step, tags, encoding, content_type,
         size, sha256, inline, object_key, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    p.checkpointId,
    thread.id,
    seq,
    parent,
    input.label ?? null,
    input.step ?? null,
    JSON.stringify(input.tags),
    p.encoding,
    p.contentType,
    p.size,
    p.sha256,
    p.inline ? p.inline.slice().buffer : null,
    p.key,
    store.now,
  );
  sql.exec("UPDATE cp_threads SET last_seq = ?, updated_at = ? WHERE id = ?", seq, store.now, thread.id);
  const pruned = deleteCheckpoints(sql, "thread_id = ? AND seq <= ?", thread.id, seq - config.keep_last);
  checkRoom(sql);
  if (pruned.keys.length) store.dropObjects(pruned.keys);
  return info(store, checkpointById(sql, p.checkpointId)!);
}

function insertThread(store: EngineStore, name: string, forkedFrom: string | null): ThreadRow {
  store.sql.exec(
    "INSERT INTO cp_threads (name, last_seq, forked_from, created_at, updated_at) VALUES (?, 0, ?, ?, ?)",
    name,
    forkedFrom,
    store.now,
    store.now,
  );
  return threadByName(store.sql, name)!;
}

/** Deletes the checkpoints `where` selects; returns how many, and the R2 keys the caller must drop. */
function deleteCheckpoints(
  sql: SqlStorage,
  where: string,
  ...args: (string | number)[]
): { count: number; keys: string[] } {
  const rows = sql
    .exec<{ object_key: string | null }>(`SELECT object_key FROM cp_checkpoints WHERE ${where}`, ...args)
    .toArray();
  if (rows.length) sql.exec(`DELETE FROM cp_checkpoints WHERE ${where}`, ...args);
  return { count: rows.length, keys: rows.flatMap((r) => (r.object_key ? [r.object_key] : [])) };
}

export function info(store: EngineStore, row: CheckpointRow) {
  return {
    checkpoint_id: row.checkpoint_id,
    thread: row.thread,
    seq: row.seq,
    parent_id: row.parent_id,
    label: row.label,
    step: row.step,
    tags: JSON.parse(row.tags) as string[],
    encoding: row.encoding,
    content_type: row.content_type,
    size: row.size,
    sha256: row.sha256,
    content_url: row.object_key ? store.downloadUrl(row.object_key) : null,
    created_at: iso(row.created_at),
  };
}

/** A checkpoint with its value, when the read step fetched it (`bytes` null: metadata only). */
export function withValue(store: EngineStore, read: { row: CheckpointRow; bytes: Uint8Array | null }) {
  return { ...info(store, read.row), ...(read.bytes ? decodeValue(read.row.encoding, read.bytes) : {}) };
}

/** Newest first, metadata only; the cursor is the last seq of the previous page. */
export function history(store: EngineStore, name: string, limit: number, cursor: string | undefined) {
  const thread = existingThread(store.sql, name);
  const before = cursor === undefined ? Number.MAX_SAFE_INTEGER : Number(cursor);
  const rows = store.sql
    .exec<CheckpointRow>(
      `${SELECT_CHECKPOINT} WHERE c.thread_id = ? AND c.seq < ? ORDER BY c.seq DESC LIMIT ?`,
      thread.id,
      before,
      limit + 1,
    )
    .toArray();
  return keysetPage(
    rows,
    limit,
    (r) => r.seq,
    (r) => info(store, r),
  );
}

function threadView(sql: SqlStorage, t: ThreadRow) {
  const kept = sql.exec<{ n: number }>("SELECT count(*) AS n FROM cp_checkpoints WHERE thread_id = ?", t.id).one().n;
  return {
    thread: t.name,
    latest_seq: t.last_seq,
    latest_id: latestOf(sql, t)?.checkpoint_id ?? null,
    checkpoints: kept,
    forked_from: t.forked_from,
    created_at: iso(t.created_at),
    updated_at: iso(t.updated_at),
  };
}

export function threads(store: EngineStore, limit: number, cursor: string | undefined) {
  const rows = store.sql
    .exec<ThreadRow>("SELECT * FROM cp_threads WHERE id > ? ORDER BY id LIMIT ?", Number(cursor ?? 0), limit + 1)
    .toArray();
  return keysetPage(
    rows,
    limit,
    (r) => r.id,
    (t) => threadView(store.sql, t),
  );
}

/** Forgets a thread and its checkpoints; its name may be used again, starting at seq 1. */
export function deleteThread(store: EngineStore, name: string) {
  const thread = existingThread(store.sql, name);
  const gone = deleteCheckpoints(store.sql, "thread_id = ?", thread.id);
  store.sql.exec("DELETE FROM cp_threads WHERE id = ?", thread.id);
  if (gone.keys.length) store.dropObjects(gone.keys);
  return { thread: name, deleted: gone.count };
}

export function usage(store: EngineStore) {
  const threadCount = store.sql.exec<{ n: number }>("SELECT count(*) AS n FROM cp_threads").one().n;
  const held = store.sql
    .exec<{ n: number; bytes: number }>("SELECT count(*) AS n, coalesce(sum(size), 0) AS bytes FROM cp_checkpoints")
    .one();
  return { threads: threadCount, checkpoints: held.n, bytes: held.bytes };
}

/**
 * Everything: values kept inline come inline, R2-held ones as their signed content_url
 * (docs/api.md#managing-a-resource).
 */
export function exportAll(store: EngineStore) {
  const threadRows = store.sql.exec<ThreadRow>("SELECT * FROM cp_threads ORDER BY id").toArray();
  const rows = store.sql.exec<CheckpointRow>(`${SELECT_CHECKPOINT} ORDER BY c.thread_id, c.seq`).toArray();
  return {
    threads: threadRows.map((t) => threadView(store.sql, t)),
    checkpoints: rows.map((r) => withValue(store, { row: r, bytes: r.inline ? new Uint8Array(r.inline) : null })),
  };
}
