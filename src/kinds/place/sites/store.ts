/**
 * A site's versions. A deploy unpacks into R2 under a prefix of its own (prepare, outside any
 * transaction), then one transaction records its files and makes it live: a reader sees the old
 * version or the new, never a mix. Two versions are kept, live and previous (for a rollback);
 * the one before them is retired in the same transaction and its bytes deleted once it commits.
 */
import { toHex } from "../../../bytes";
import { AppError } from "../../../http/errors";
import type { EngineStore, PrepareContext } from "../../../kind/kind";
import { iso } from "../../../time";
import { keysetPage, type Page } from "../../../kind/pages";
import { contentTypeOf } from "./content-types";
import { unpack } from "./unpack";
import type { DeployView, SiteConfig, SiteFile, SiteView } from "./schema";

export const TABLES = [
  `CREATE TABLE deploys (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, deploy_id TEXT NOT NULL UNIQUE, created_at INTEGER NOT NULL,
    files INTEGER NOT NULL, bytes INTEGER NOT NULL, archive_bytes INTEGER NOT NULL, stripped_prefix TEXT,
    state TEXT NOT NULL CHECK (state IN ('live', 'previous', 'retired'))
  )`,
  `CREATE TABLE files (
    seq INTEGER NOT NULL, path TEXT NOT NULL, key TEXT NOT NULL, size INTEGER NOT NULL, etag TEXT NOT NULL,
    content_type TEXT NOT NULL, PRIMARY KEY (seq, path)
  )`,
];

type DeployRow = {
  seq: number;
  deploy_id: string;
  created_at: number;
  files: number;
  bytes: number;
  archive_bytes: number;
  stripped_prefix: string | null;
  state: DeployView["state"];
};
export type FileRow = SiteFile & { key: string };

/** A deploy unpacked into R2, not yet recorded. */
export interface Staged {
  deployId: string;
  files: FileRow[];
  bytes: number;
  archiveBytes: number;
  strippedPrefix: string | null;
}

/** A zipped folder (every file in one folder, no index.html above it) is served from inside it. */
function stripFolder(files: FileRow[]): string | null {
  if (files.some((f) => f.path === "index.html")) return null;
  const first = files[0]?.path.split("/")[0];
  if (!first || !files.every((f) => f.path.startsWith(`${first}/`))) return null;
  for (const f of files) f.path = f.path.slice(first.length + 1);
  return first;
}

/**
 * Unpacks the archive streaming in into R2 (each file with its type and digest); on any failure deletes what it wrote.
 */
export async function stage(ctx: PrepareContext, body: ReadableStream<Uint8Array> | null): Promise<Staged> {
  if (!body) throw new AppError("validation_failed", "Send the site as a zip archive in the request body.");
  const deployId = crypto.randomUUID();
  const files: FileRow[] = [];
  try {
    const totals = await unpack(body, async ({ path, bytes }) => {
      const key = `${ctx.resourceId}/sites/${deployId}/${files.length}`;
      const contentType = contentTypeOf(path);
      const digest = toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)));
      await ctx.env.BUCKET.put(key, bytes, { httpMetadata: { contentType } });
      files.push({ path, key, size: bytes.length, etag: `"${digest.slice(0, 32)}"`, content_type: contentType });
    });
    return {
      deployId,
      files,
      bytes: totals.bytes,
      archiveBytes: totals.archiveBytes,
      strippedPrefix: stripFolder(files),
    };
  } catch (err) {
    await deleteFiles(ctx, files);
    throw err;
  }
}

async function deleteFiles(ctx: PrepareContext, files: FileRow[]): Promise<void> {
  const keys = files.map((f) => f.key);
  for (let i = 0; i < keys.length; i += 1000) await ctx.env.BUCKET.delete(keys.slice(i, i + 1000));
}

/** A deploy refused after it was unpacked (the payment failed): its files go. */
export const discard = (ctx: PrepareContext, staged: Staged): Promise<void> => deleteFiles(ctx, staged.files);

const deployOf = (r: DeployRow): DeployView => ({
  seq: r.seq,
  deploy_id: r.deploy_id,
  created_at: iso(r.created_at),
  files: r.files,
  bytes: r.bytes,
  archive_bytes: r.archive_bytes,
  stripped_prefix: r.stripped_prefix,
  state: r.state,
});

const inState = (sql: SqlStorage, state: "live" | "previous") =>
  sql.exec<DeployRow>("SELECT * FROM deploys WHERE state = ?", state).toArray()[0] ?? null;

/** The live version: what the address serves. */
export const live = (sql: SqlStorage): DeployRow | null => inState(sql, "live");

export function view(sql: SqlStorage, config: SiteConfig): SiteView {
  const current = live(sql);
  const previous = inState(sql, "previous");
  return {
    live: current && deployOf(current),
    previous: previous && deployOf(previous),
    deploys: sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM deploys").one().n,
    spa_fallback: config.spa_fallback,
    scripts: config.scripts,
    cache_seconds: config.cache_seconds,
  };
}

/** Makes the staged deploy live; the live one becomes previous, the previous one is retired (its bytes dropped). */
export function publish(store: EngineStore, staged: Staged): DeployView {
  const { sql } = store;
  const retired = inState(sql, "previous");
  if (retired) {
    store.dropObjects(
      sql
        .exec<{ key: string }>("SELECT key FROM files WHERE seq = ?", retired.seq)
        .toArray()
        .map((r) => r.key),
    );
    sql.exec("DELETE FROM files WHERE seq = ?", retired.seq);
    sql.exec("UPDATE deploys SET state = 'retired' WHERE seq = ?", retired.seq);
  }
  sql.exec("UPDATE deploys SET state = 'previous' WHERE state = 'live'");
  const { seq } = sql
    .exec<{ seq: number }>(
      "INSERT INTO deploys (deploy_id, created_at, files, bytes, archive_bytes, stripped_prefix, state) " +
        "VALUES (?, ?, ?, ?, ?, ?, 'live') RETURNING seq",
      staged.deployId,
      store.now,
      staged.files.length,
      staged.bytes,
      staged.archiveBytes,
      staged.strippedPrefix,
    )
    .one();
  for (const f of staged.files) {
    sql.exec(
      "INSERT INTO files (seq, path, key, size, etag, content_type) VALUES (?, ?, ?, ?, ?, ?)",
      seq,
      f.path,
      f.key,
      f.size,
      f.etag,
      f.content_type,
    );
  }
  return deployOf(sql.exec<DeployRow>("SELECT * FROM deploys WHERE seq = ?", seq).one());
}

/** The previous version becomes live again, and the live one previous (so a second rollback undoes the first). */
export function rollback(store: EngineStore): DeployView {
  const previous = inState(store.sql, "previous");
  if (!previous) throw new AppError("conflict", "There is no previous version to roll back to.");
  store.sql.exec(
    "UPDATE deploys SET state = CASE state WHEN 'live' THEN 'previous' ELSE 'live' END WHERE state IN " +
      "('live', 'previous')",
  );
  return deployOf(live(store.sql)!);
}

export function fileAt(sql: SqlStorage, seq: number, path: string): FileRow | null {
  return (
    sql
      .exec<FileRow>("SELECT path, key, size, etag, content_type FROM files WHERE seq = ? AND path = ?", seq, path)
      .toArray()[0] ?? null
  );
}

export function filesPage(sql: SqlStorage, limit: number, cursor: string | undefined): Page<SiteFile> {
  const current = live(sql);
  const rows = current
    ? sql
        .exec<SiteFile>(
          "SELECT path, size, etag, content_type FROM files WHERE seq = ? AND path > ? ORDER BY path LIMIT ?",
          current.seq,
          cursor ?? "",
          limit + 1,
        )
        .toArray()
    : [];
  return keysetPage(
    rows,
    limit,
    (r) => r.path,
    (r) => r,
  );
}

export function deploysPage(sql: SqlStorage, limit: number, cursor: string | undefined): Page<DeployView> {
  const before = cursor === undefined ? Number.MAX_SAFE_INTEGER : Number(cursor);
  const rows = sql
    .exec<DeployRow>("SELECT * FROM deploys WHERE seq < ? ORDER BY seq DESC LIMIT ?", before, limit + 1)
    .toArray();
  return keysetPage(rows, limit, (r) => r.seq, deployOf);
}

/** Everything for the export: the versions, and the live version's files with signed links. */
export function exportSite(store: EngineStore, config: SiteConfig) {
  const current = live(store.sql);
  const files = current
    ? store.sql
        .exec<FileRow>("SELECT path, key, size, etag, content_type FROM files WHERE seq = ? ORDER BY path", current.seq)
        .toArray()
    : [];
  return {
    site: view(store.sql, config),
    deploys: store.sql.exec<DeployRow>("SELECT * FROM deploys ORDER BY seq DESC").toArray().map(deployOf),
    files: files.map(({ key, ...f }) => ({ ...f, url: store.downloadUrl(key) })),
  };
}

export function usage(sql: SqlStorage): { deploys: number; files: number; bytes: number } {
  const current = live(sql);
  return {
    deploys: sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM deploys").one().n,
    files: current?.files ?? 0,
    bytes: current?.bytes ?? 0,
  };
}
