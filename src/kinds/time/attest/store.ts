/**
 * An attest resource's fetches: one row each (the signed receipt and what the
 * stored object needs), the bytes in R2 under `{resource id}/attest/`. Rows are
 * written only by `run`, inside the charged transaction; the limits are checked
 * there again, since two fetches may have been prepared side by side.
 */
import { AppError } from "../../../http/errors";
import { keysetPage } from "../../../kind/pages";
import type { EngineStore } from "../../../kind/kind";
import type { Fetched, InlineContent } from "./content";
import { payloadOf } from "./receipt";
import { MAX_FETCHES, MAX_STORED_BYTES } from "./schema";

type Row = { seq: number; fetch_id: string; jws: string; size: number; content_type: string | null };

export const objectKey = (resourceId: string, fetchId: string) => `${resourceId}/attest/${fetchId}`;

/** The module's tables as the kind's first migration creates them (see the kind's `migrations`). */
export const TABLES = [
  `CREATE TABLE attest_fetches (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, fetch_id TEXT NOT NULL UNIQUE, jws TEXT NOT NULL,
    size INTEGER NOT NULL, content_type TEXT, created_at INTEGER NOT NULL)`,
];

export function stored(sql: SqlStorage): { fetches: number; bytes: number } {
  return sql
    .exec<{ fetches: number; bytes: number }>(
      "SELECT count(*) AS fetches, coalesce(sum(size), 0) AS bytes FROM attest_fetches",
    )
    .one();
}

/** Refuses one more fetch of `size` bytes when the resource is full. */
export function checkRoom(held: { fetches: number; bytes: number }, size: number): void {
  if (held.fetches >= MAX_FETCHES) {
    throw new AppError("validation_failed", `This resource already holds ${MAX_FETCHES} fetches: create another one.`, {
      errors: [{ path: "fetches", message: `at most ${MAX_FETCHES} per resource` }],
    });
  }
  if (held.bytes + size > MAX_STORED_BYTES) {
    throw new AppError(
      "payload_too_large",
      `This resource keeps at most ${MAX_STORED_BYTES} bytes; it holds ${held.bytes} and the answer has ${size}.`,
    );
  }
}

function view(store: EngineStore, row: Row) {
  const payload = payloadOf(row.jws);
  return {
    fetch_id: row.fetch_id,
    url: payload.url,
    final_url: payload.final_url,
    method: payload.method,
    status: payload.status,
    content_type: row.content_type,
    body_sha256: payload.body_sha256,
    body_size: payload.body_size,
    fetched_at: payload.fetched_at,
    content_url: store.downloadUrl(objectKey(store.resourceId, row.fetch_id)),
    receipt: { jws: row.jws, payload },
  };
}

export function record(store: EngineStore, fetched: Fetched) {
  checkRoom(stored(store.sql), fetched.size);
  store.sql.exec(
    "INSERT INTO attest_fetches (fetch_id, jws, size, content_type, created_at) VALUES (?, ?, ?, ?, ?)",
    fetched.fetchId,
    fetched.jws,
    fetched.size,
    fetched.contentType,
    store.now,
  );
  return { ...view(store, byId(store, fetched.fetchId)), content: fetched.content };
}

function byId(store: EngineStore, fetchId: string): Row {
  const row = store.sql.exec<Row>("SELECT * FROM attest_fetches WHERE fetch_id = ?", fetchId).toArray()[0];
  if (!row) throw new AppError("not_found", `No fetch ${fetchId} in this resource.`);
  return row;
}

export function get(store: EngineStore, fetchId: string, content: InlineContent) {
  return { ...view(store, byId(store, fetchId)), content };
}

export function list(store: EngineStore, limit: number, cursor: string | undefined) {
  const rows = store.sql
    .exec<Row>("SELECT * FROM attest_fetches WHERE seq > ? ORDER BY seq LIMIT ?", Number(cursor ?? 0), limit + 1)
    .toArray();
  return keysetPage(
    rows,
    limit,
    (r) => r.seq,
    (r) => view(store, r),
  );
}

export function exportAll(store: EngineStore) {
  return {
    fetches: store.sql
      .exec<Row>("SELECT * FROM attest_fetches ORDER BY seq")
      .toArray()
      .map((r) => view(store, r)),
  };
}
