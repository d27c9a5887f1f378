/**
 * One blob per resource, in R2 under `{id}/blob/{upload id}`: a new upload goes to a
 * new key and replaces the old one only once its bytes are all in, so a failed upload
 * never damages what was there.
 */
import { AppError } from "../../../http/errors";
import type { EngineStore, PrepareContext } from "../../../kind/kind";
import type { PublicAnswer, PublicRequest } from "../../../kind/public-face";
import { putStream, type Stored } from "../../../kind/r2";
import { checkRange } from "../../../kind/downloads";
import { isoOrNull } from "../../../time";
import { attachmentDisposition } from "../../../http/header-fields";
import type { BlobConfig, BlobView } from "./schema";
import type { RawBodyInput } from "../../../openapi/schemas";

type BlobRow = {
  object_key: string | null;
  size: number | null;
  sha256: string | null;
  content_type: string | null;
  uploaded_at: number | null;
  public_downloads: number;
};

/** The module's tables as the kind's first migration creates them (see the kind's `migrations`). */
export const TABLES = [
  `CREATE TABLE blob (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    object_key TEXT, size INTEGER, sha256 TEXT, content_type TEXT, uploaded_at INTEGER,
    public_downloads INTEGER NOT NULL DEFAULT 0
  )`,
];

export function init(store: EngineStore): void {
  store.sql.exec("INSERT INTO blob (id) VALUES (1)");
}

const row = (sql: SqlStorage) => sql.exec<BlobRow>("SELECT * FROM blob").one();

export function view(store: EngineStore, config: BlobConfig): BlobView {
  const b = row(store.sql);
  return {
    uploaded: b.object_key !== null,
    size: b.size,
    sha256: b.sha256,
    content_type: b.content_type,
    uploaded_at: isoOrNull(b.uploaded_at),
    public_downloads: b.public_downloads,
    max_downloads: config.max_downloads ?? null,
    content_url: b.object_key ? store.downloadUrl(b.object_key) : null,
  };
}

export function usage(store: EngineStore): { bytes: number; public_downloads: number } {
  const b = row(store.sql);
  return { bytes: b.size ?? 0, public_downloads: b.public_downloads };
}

export interface Uploaded extends Stored {
  key: string;
  contentType: string;
}

/** Streams the body into a fresh key, hashing it; nothing is recorded yet (that is `record`, in the transaction). */
export async function upload(
  ctx: PrepareContext,
  config: BlobConfig,
  input: RawBodyInput,
  body: ReadableStream<Uint8Array> | null,
): Promise<Uploaded> {
  if (!body) throw new AppError("invalid_request", "Send the blob's bytes as the request body.");
  const key = `${ctx.resourceId}/blob/${crypto.randomUUID()}`;
  const contentType = config.content_type ?? input.content_type;
  const disposition = attachmentDisposition(config.filename);
  try {
    const stored = await putStream(ctx.env.BUCKET, key, body, input.content_length, {
      httpMetadata: { contentType, contentDisposition: disposition },
    });
    return { ...stored, key, contentType };
  } catch (err) {
    await ctx.env.BUCKET.delete(key);
    throw new AppError(
      "invalid_request",
      (
        `The upload did not complete: the body must be exactly Content-Length (${input.content_length}` +
        `) bytes. ${err instanceof Error ? err.message : ""}`
      ).trim(),
    );
  }
}

export function record(store: EngineStore, config: BlobConfig, up: Uploaded): BlobView {
  const old = row(store.sql).object_key;
  store.sql.exec(
    "UPDATE blob SET object_key = ?, size = ?, sha256 = ?, content_type = ?, uploaded_at = ?, public_downloads = 0",
    up.key,
    up.size,
    up.sha256,
    up.contentType,
    store.now,
  );
  if (old) store.dropObjects([old]);
  return view(store, config);
}

export async function discard(ctx: PrepareContext, up: Uploaded): Promise<void> {
  await ctx.env.BUCKET.delete(up.key);
}

/** What the download serves; a Range that selects nothing is refused here, before it is charged. */
export function stored(store: EngineStore, range: string | undefined): { object_key: string } {
  const b = row(store.sql);
  if (!b.object_key || b.size === null)
    throw new AppError("not_found", "Nothing has been uploaded yet: PUT the bytes to …/content first.");
  checkRange(range, b.size);
  return { object_key: b.object_key };
}

export function remove(store: EngineStore, config: BlobConfig): BlobView {
  const key = row(store.sql).object_key;
  if (key) store.dropObjects([key]);
  store.sql.exec(
    "UPDATE blob SET object_key = NULL, size = NULL, sha256 = NULL, content_type = NULL, uploaded_at = NULL",
  );
  return view(store, config);
}

/** What a link to this blob serves (links/): the current upload, if any. */
export function shared(store: EngineStore): { key: string } | null {
  const key = row(store.sql).object_key;
  return key ? { key } : null;
}

/** The public link: each GET is a download (counted before the bytes go out), HEAD only looks. */
export function publicDownload(store: EngineStore, config: BlobConfig, request: PublicRequest): PublicAnswer {
  const b = row(store.sql);
  if (!b.object_key) throw new AppError("not_found", "Nothing has been uploaded here yet.");
  if (config.max_downloads !== undefined && b.public_downloads >= config.max_downloads) {
    throw new AppError("not_found", "This link has reached its download limit.");
  }
  if (request.method === "GET") store.sql.exec("UPDATE blob SET public_downloads = public_downloads + 1");
  return { type: "object", key: b.object_key };
}
