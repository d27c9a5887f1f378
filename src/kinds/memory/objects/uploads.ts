/**
 * The records of multipart uploads: one open at a time per resource, its parts with
 * their sizes, R2 etags and sha256. R2 keeps the parts themselves (outside the bucket
 * listing); these rows are what resume, complete and the end-of-life abort rely on.
 */
import { AppError } from "../../../http/errors";
import { keysetPage } from "../../../kind/pages";
import type { EngineStore } from "../../../kind/kind";
import { iso, isoOrNull } from "../../../time";
import { partSizeOf, type PartSize } from "./layout";
import type { PartView, UploadView } from "./schema";

export type UploadRow = {
  upload_id: string;
  r2_upload_id: string;
  object_key: string;
  content_type: string;
  state: UploadView["state"];
  created_at: number;
  finished_at: number | null;
};
export type PartRow = { part_number: number; size: number; etag: string; sha256: string; uploaded_at: number };

/** The module's tables as the kind's first migration creates them (see the kind's `migrations`). */
export const TABLES = [
  `CREATE TABLE object_uploads (
    upload_id TEXT PRIMARY KEY, r2_upload_id TEXT NOT NULL, object_key TEXT NOT NULL, content_type TEXT NOT NULL,
    state TEXT NOT NULL, created_at INTEGER NOT NULL, finished_at INTEGER
  )`,
  `CREATE TABLE object_parts (
    upload_id TEXT NOT NULL, part_number INTEGER NOT NULL, size INTEGER NOT NULL, etag TEXT NOT NULL,
    sha256 TEXT NOT NULL, uploaded_at INTEGER NOT NULL, PRIMARY KEY (upload_id, part_number)
  )`,
];

export const newUploadId = () => `up_${crypto.randomUUID().replace(/-/g, "")}`;

export const openUploads = (sql: SqlStorage): UploadRow[] =>
  sql.exec<UploadRow>("SELECT * FROM object_uploads WHERE state = 'open'").toArray();

/** Creating a second upload while one is open is refused, naming the open one (resume or abort it). */
export function checkNoneOpen(sql: SqlStorage): void {
  const open = openUploads(sql)[0];
  if (open)
    throw new AppError(
      "conflict",
      `Upload ${open.upload_id} is still open: resume it (GET …/uploads/${open.upload_id}/parts), complete ` +
        `it, or abort it first.`,
    );
}

export function uploadOf(sql: SqlStorage, uploadId: string): UploadRow {
  const up = sql.exec<UploadRow>("SELECT * FROM object_uploads WHERE upload_id = ?", uploadId).toArray()[0];
  if (!up) throw new AppError("not_found", `No upload ${uploadId} in this resource.`);
  return up;
}

export function openUpload(sql: SqlStorage, uploadId: string): UploadRow {
  const up = uploadOf(sql, uploadId);
  if (up.state !== "open") throw new AppError("conflict", `Upload ${uploadId} is ${up.state}; start a new one.`);
  return up;
}

export const partsOf = (sql: SqlStorage, uploadId: string): PartRow[] =>
  sql
    .exec<PartRow>(
      "SELECT part_number, size, etag, sha256, uploaded_at FROM object_parts WHERE upload_id = ? ORDER BY part_number",
      uploadId,
    )
    .toArray();

export const partSizes = (sql: SqlStorage, uploadId: string): PartSize[] =>
  sql
    .exec<PartSize>("SELECT part_number, size FROM object_parts WHERE upload_id = ? ORDER BY part_number", uploadId)
    .toArray();

export function uploadView(sql: SqlStorage, up: UploadRow): UploadView {
  const sizes = partSizes(sql, up.upload_id);
  return {
    upload_id: up.upload_id,
    state: up.state,
    content_type: up.content_type,
    created_at: iso(up.created_at),
    finished_at: isoOrNull(up.finished_at),
    parts: sizes.length,
    bytes: sizes.reduce((sum, p) => sum + p.size, 0),
    part_size: partSizeOf(sizes),
  };
}

export function openUploadView(sql: SqlStorage): UploadView | null {
  const open = openUploads(sql)[0];
  return open ? uploadView(sql, open) : null;
}

/** Bytes held in parts of open uploads (R2 stores them until complete or abort). */
export const uploadBytes = (sql: SqlStorage): number =>
  sql
    .exec<{ n: number }>(
      "SELECT COALESCE(SUM(p.size), 0) AS n FROM object_parts p JOIN object_uploads u USING (upload_id) " +
        "WHERE u.state = 'open'",
    )
    .one().n;

export const partView = (p: PartRow): PartView => ({
  part_number: p.part_number,
  size: p.size,
  etag: p.etag,
  sha256: p.sha256,
  uploaded_at: iso(p.uploaded_at),
});

export function insertUpload(
  store: EngineStore,
  up: Omit<UploadRow, "state" | "created_at" | "finished_at">,
): UploadView {
  checkNoneOpen(store.sql); // again, atomically: another create may have won while R2 was asked
  store.sql.exec(
    "INSERT INTO object_uploads (upload_id, r2_upload_id, object_key, content_type, state, created_at) " +
      "VALUES (?, ?, ?, ?, 'open', ?)",
    up.upload_id,
    up.r2_upload_id,
    up.object_key,
    up.content_type,
    store.now,
  );
  return uploadView(store.sql, uploadOf(store.sql, up.upload_id));
}

export function upsertPart(store: EngineStore, uploadId: string, part: Omit<PartRow, "uploaded_at">): PartView {
  store.sql.exec(
    "INSERT OR REPLACE INTO object_parts (upload_id, part_number, size, etag, sha256, uploaded_at) VALUES " +
      "(?, ?, ?, ?, ?, ?)",
    uploadId,
    part.part_number,
    part.size,
    part.etag,
    part.sha256,
    store.now,
  );
  return partView({ ...part, uploaded_at: store.now });
}

/** Closes an upload: its part rows go (R2 has assembled or dropped the parts), the upload row stays as history. */
export function finishUpload(store: EngineStore, uploadId: string, state: "completed" | "aborted"): UploadView {
  store.sql.exec(
    "UPDATE object_uploads SET state = ?, finished_at = ? WHERE upload_id = ?",
    state,
    store.now,
    uploadId,
  );
  store.sql.exec("DELETE FROM object_parts WHERE upload_id = ?", uploadId);
  return uploadView(store.sql, uploadOf(store.sql, uploadId));
}

export function listParts(
  sql: SqlStorage,
  uploadId: string,
  limit: number,
  cursor: string | undefined,
): { items: PartView[]; next_cursor: string | null } {
  uploadOf(sql, uploadId);
  const rows = sql
    .exec<PartRow>(
      "SELECT part_number, size, etag, sha256, uploaded_at FROM object_parts WHERE upload_id = ? AND " +
        "part_number > ? ORDER BY part_number LIMIT ?",
      uploadId,
      Number(cursor ?? 0),
      limit + 1,
    )
    .toArray();
  return keysetPage(rows, limit, (r) => r.part_number, partView);
}

/** Records an abort (R2 has dropped the parts); aborting an aborted upload again changes nothing. */
export function closeAborted(store: EngineStore, uploadId: string): UploadView {
  const up = uploadOf(store.sql, uploadId);
  if (up.state === "completed")
    throw new AppError(
      "conflict",
      `Upload ${uploadId} is completed; ` + "delete the object with DELETE …/content instead.",
    );
  return up.state === "open" ? finishUpload(store, uploadId, "aborted") : uploadView(store.sql, up);
}
