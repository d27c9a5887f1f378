/**
 * One page per resource: its source, the HTML served (rendered once per change, not per view),
 * that HTML's ETag, and the view count. A change is one UPDATE, so a reader sees the old page or
 * the new one, never a mix.
 */
import { AppError } from "../../../http/errors";
import type { EngineStore } from "../../../kind/kind";
import { sha256Hex, utf8Length } from "../../../bytes";
import { iso, isoOrNull } from "../../../time";
import { render, type Source } from "./render";
import type { PageCreate, PageUpdate, PageView } from "./schema";

/** What one row may hold, with room to spare: the served HTML is refused past it rather than failing the write. */
const MAX_SERVED_BYTES = 1_500_000;

export const TABLES = [
  `CREATE TABLE page (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    format TEXT NOT NULL, content TEXT NOT NULL, title TEXT, description TEXT,
    scripts INTEGER NOT NULL, indexable INTEGER NOT NULL,
    html TEXT NOT NULL, etag TEXT NOT NULL, version INTEGER NOT NULL, updated_at INTEGER NOT NULL,
    views INTEGER NOT NULL DEFAULT 0, last_viewed_at INTEGER
  )`,
];

interface Settings extends Source {
  scripts: boolean;
  indexable: boolean;
}

type PageRow = {
  format: "markdown" | "html";
  content: string;
  title: string | null;
  description: string | null;
  scripts: number;
  indexable: number;
  html: string;
  etag: string;
  version: number;
  updated_at: number;
  views: number;
  last_viewed_at: number | null;
};

/** The page as served: HTML, and an ETag over everything that shapes the answer (its headers too). */
function served(settings: Settings): { html: string; etag: string } {
  const html = render(settings);
  if (utf8Length(html) > MAX_SERVED_BYTES) {
    throw new AppError("validation_failed", `The page renders to more than ${MAX_SERVED_BYTES} bytes: shorten it.`, {
      errors: [{ path: "content", message: "renders too large" }],
    });
  }
  const etag = `"${sha256Hex(`${settings.scripts ? 1 : 0}${settings.indexable ? 1 : 0}${html}`).slice(0, 32)}"`;
  return { html, etag };
}

function write(store: EngineStore, s: Settings, version: number): void {
  const { html, etag } = served(s);
  store.sql.exec(
    `INSERT INTO page (id, format, content, title, description, scripts, indexable, html, etag, version, updated_at)
     VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET format = excluded.format, content = excluded.content, title = excluded.title,
       description = excluded.description, scripts = excluded.scripts, indexable = excluded.indexable,
       html = excluded.html, etag = excluded.etag, version = excluded.version, updated_at = excluded.updated_at`,
    s.format,
    s.content,
    s.title,
    s.description,
    s.scripts ? 1 : 0,
    s.indexable ? 1 : 0,
    html,
    etag,
    version,
    store.now,
  );
}

export function create(store: EngineStore, page: PageCreate): void {
  write(
    store,
    {
      format: page.format,
      content: page.content,
      title: page.title ?? null,
      description: page.description ?? null,
      scripts: page.scripts,
      indexable: page.indexable,
    },
    1,
  );
}

export const row = (sql: SqlStorage) => sql.exec<PageRow>("SELECT * FROM page").one();

export function view(sql: SqlStorage): PageView {
  const p = row(sql);
  return {
    format: p.format,
    title: p.title,
    description: p.description,
    scripts: p.scripts === 1,
    indexable: p.indexable === 1,
    bytes: utf8Length(p.content),
    served_bytes: utf8Length(p.html),
    version: p.version,
    etag: p.etag,
    updated_at: iso(p.updated_at),
    views: p.views,
    last_viewed_at: isoOrNull(p.last_viewed_at),
  };
}

export function update(store: EngineStore, change: PageUpdate): PageView {
  const p = row(store.sql);
  const next: Settings = {
    format: change.format ?? p.format,
    content: change.content ?? p.content,
    title: change.title === undefined ? p.title : change.title,
    description: change.description === undefined ? p.description : change.description,
    scripts: change.scripts ?? p.scripts === 1,
    indexable: change.indexable ?? p.indexable === 1,
  };
  write(store, next, p.version + 1);
  return view(store.sql);
}

export function countView(store: EngineStore): void {
  store.sql.exec("UPDATE page SET views = views + 1, last_viewed_at = ?", store.now);
}
