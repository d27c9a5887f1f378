/**
 * A link's counts and its click log: the newest MAX_CLICK_LOG clicks (time, referrer host,
 * country), newest first; the count goes on past them.
 */
import type { EngineStore } from "../../../kind/kind";
import { iso, isoOrNull } from "../../../time";
import { keysetPage, type Page } from "../../../kind/pages";
import { MAX_CLICK_LOG, type Click, type LinkConfig, type LinkView } from "./schema";

export const TABLES = [
  `CREATE TABLE link (id INTEGER PRIMARY KEY CHECK (id = 1), clicks INTEGER NOT NULL DEFAULT 0, refused ` +
    `INTEGER NOT NULL DEFAULT 0, last_click_at INTEGER)`,
  `CREATE TABLE clicks (seq INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, referrer_host TEXT, country TEXT)`,
];

type LinkRow = { clicks: number; refused: number; last_click_at: number | null };
type ClickRow = { seq: number; at: number; referrer_host: string | null; country: string | null };

export function init(store: EngineStore): void {
  store.sql.exec("INSERT INTO link (id) VALUES (1)");
}

const counts = (sql: SqlStorage) => sql.exec<LinkRow>("SELECT clicks, refused, last_click_at FROM link").one();

export function view(sql: SqlStorage, config: LinkConfig): LinkView {
  const c = counts(sql);
  const max = config.max_clicks ?? null;
  return {
    target_url: config.target_url ?? null,
    content_resource_id: config.content_resource_id ?? null,
    redirect_status: config.redirect_status,
    clicks: c.clicks,
    max_clicks: max,
    remaining_clicks: max === null ? null : Math.max(0, max - c.clicks),
    exhausted: max !== null && c.clicks >= max,
    last_click_at: isoOrNull(c.last_click_at),
    refused: c.refused,
  };
}

export const exhausted = (sql: SqlStorage, config: LinkConfig): boolean =>
  config.max_clicks !== undefined && counts(sql).clicks >= config.max_clicks;

export function countRefused(store: EngineStore): void {
  store.sql.exec("UPDATE link SET refused = refused + 1");
}

/** The Referer's host (lower case), or null when none or not a URL. */
function referrerHost(referer: string | undefined): string | null {
  if (!referer) return null;
  try {
    return new URL(referer).hostname.toLowerCase() || null;
  } catch {
    return null;
  }
}

/** Cloudflare's two-letter country code (XX unknown, T1 Tor), kept only when it is one. */
const countryOf = (header: string | undefined): string | null =>
  header && /^[A-Z0-9]{2}$/.test(header) ? header : null;

export function recordClick(store: EngineStore, headers: Record<string, string>): void {
  store.sql.exec("UPDATE link SET clicks = clicks + 1, last_click_at = ?", store.now);
  const { seq } = store.sql
    .exec<{ seq: number }>(
      "INSERT INTO clicks (at, referrer_host, country) VALUES (?, ?, ?) RETURNING seq",
      store.now,
      referrerHost(headers.referer),
      countryOf(headers["cf-ipcountry"]),
    )
    .one();
  if (seq > MAX_CLICK_LOG) store.sql.exec("DELETE FROM clicks WHERE seq <= ?", seq - MAX_CLICK_LOG);
}

const clickOf = (r: ClickRow): Click => ({
  seq: r.seq,
  at: iso(r.at),
  referrer_host: r.referrer_host,
  country: r.country,
});

export function clicksPage(sql: SqlStorage, limit: number, cursor: string | undefined): Page<Click> {
  const before = cursor === undefined ? Number.MAX_SAFE_INTEGER : Number(cursor);
  const rows = sql
    .exec<ClickRow>("SELECT * FROM clicks WHERE seq < ? ORDER BY seq DESC LIMIT ?", before, limit + 1)
    .toArray();
  return keysetPage(rows, limit, (r) => r.seq, clickOf);
}

export const allClicks = (sql: SqlStorage): Click[] =>
  sql.exec<ClickRow>("SELECT * FROM clicks ORDER BY seq DESC").toArray().map(clickOf);
