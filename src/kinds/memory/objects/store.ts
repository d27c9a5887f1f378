/**
 * One object per resource, in R2 under `{id}/object/{name}`: every way in (a PUT, a
 * completed multipart upload, a source_url copy) writes a new key and replaces the
 * current object only once all its bytes are in, so a failed attempt never damages
 * what was there. The object's row here says which key is current.
 */
import { checkRange } from "../../../kind/downloads";
import { AppError } from "../../../http/errors";
import type { EngineStore, PrepareContext } from "../../../kind/kind";
import type { Stored } from "../../../kind/r2";
import { isoOrNull } from "../../../time";
import { attachmentDisposition } from "../../../http/header-fields";
import { openUploadView, partView, partsOf, uploadBytes } from "./uploads";
import type { ObjectConfig, ObjectView } from "./schema";

type ObjectRow = {
  object_key: string | null;
  size: number | null;
  sha256: string | null;
  content_type: string | null;
  stored_at: number | null;
  origin: ObjectView["origin"];
  source_url: string | null;
};

/** The module's tables as the kind's first migration creates them (see the kind's `migrations`). */
export const TABLES = [
  `CREATE TABLE object_current (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    object_key TEXT, size INTEGER, sha256 TEXT, content_type TEXT, stored_at INTEGER, origin TEXT, source_url TEXT
  )`,
];

export function init(store: EngineStore): void {
  store.sql.exec("INSERT INTO object_current (id) VALUES (1)");
}

const row = (sql: SqlStorage) => sql.exec<ObjectRow>("SELECT * FROM object_current").one();

/** The current object's key, or null; readable from a prepare step too. */
export const currentKey = (sql: SqlStorage): string | null => row(sql).object_key;

/**
 * Whether the resource still exists: a long copy checks between parts, so a resource
 * cancelled meanwhile (its storage deleted) stops the copy instead of paying for the rest.
 */
/** A fresh key for new bytes below the resource's prefix. */
export const newObjectKey = (resourceId: string, name: string = crypto.randomUUID()) => `${resourceId}/object/${name}`;

/** How the object is served: its type, and the file name offered. */
export function httpMetadata(config: ObjectConfig, contentType: string): R2HTTPMetadata {
  return {
    contentType: config.content_type ?? contentType,
    contentDisposition: attachmentDisposition(config.filename),
  };
}

export function view(store: EngineStore, _config?: ObjectConfig): ObjectView {
  const o = row(store.sql);
  return {
    stored: o.object_key !== null,
    size: o.size,
    sha256: o.sha256,
    content_type: o.content_type,
    stored_at: isoOrNull(o.stored_at),
    origin: o.origin,
    source_url: o.source_url,
    content_url: o.object_key ? store.downloadUrl(o.object_key) : null,
    open_upload: openUploadView(store.sql),
  };
}

/** The export: the object (its bytes by signed link) and, for an open upload, the parts received so far. */
export function exportAll(store: EngineStore, config: ObjectConfig) {
  const v = view(store, config);
  return { ...v, open_upload_parts: v.open_upload ? partsOf(store.sql, v.open_upload.upload_id).map(partView) : [] };
}

export function usage(store: EngineStore): { bytes: number; upload_bytes: number } {
  return { bytes: row(store.sql).size ?? 0, upload_bytes: uploadBytes(store.sql) };
}

/** New bytes fully in R2, waiting to become the current object. */
export interface Landed extends Stored {
  key: string;
  contentType: string;
  origin: NonNullable<ObjectView["origin"]>;
  sourceUrl: string | null;
}

/** Makes `landed` the current object; the one it replaces is deleted once this commits. */
export function record(store: EngineStore, config: ObjectConfig, landed: Landed): ObjectView {
  const old = row(store.sql).object_key;
  store.sql.exec(
    "UPDATE object_current SET object_key = ?, size = ?, sha256 = ?, content_type = ?, stored_at = ?, " +
      "origin = ?, source_url = ?",
    landed.key,
    landed.size,
    landed.sha256,
    config.content_type ?? landed.contentType,
    store.now,
    landed.origin,
    landed.sourceUrl,
  );
  if (old && old !== landed.key) store.dropObjects([old]);
  return view(store, config);
}

/** Undoes a landing that was refused (unpaid, or the resource ended): unless it became current meanwhile. */
export async function discardLanded(ctx: PrepareContext, landed: Landed): Promise<void> {
  try {
    ctx.stillHere();
    if (currentKey(ctx.sql) === landed.key) return;
  } catch {
    // The resource ended: its prefix is being deleted anyway; delete the landing too.
  }
  await ctx.env.BUCKET.delete(landed.key);
}

/** What the download serves; a Range that starts past the end is refused here, before it is charged. */
export function stored(store: EngineStore, range: string | undefined): { object_key: string; sha256: string } {
  const o = row(store.sql);
  if (!o.object_key || o.size === null || o.sha256 === null)
    throw new AppError(
      "not_found",
      "Nothing is stored yet: PUT the bytes to …/content, complete a multipart upload, or POST …/fetch.",
    );
  checkRange(range, o.size);
  return { object_key: o.object_key, sha256: o.sha256 };
}

export function remove(store: EngineStore, config: ObjectConfig): ObjectView {
  const key = row(store.sql).object_key;
  if (key) store.dropObjects([key]);
  store.sql.exec(
    "UPDATE object_current SET object_key = NULL, size = NULL, sha256 = NULL, content_type = NULL, " +
      "stored_at = NULL, origin = NULL, source_url = NULL",
  );
  return view(store, config);
}
