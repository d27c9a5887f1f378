/**
 * A snapshot watcher's state inside its ResourceObject: the clock, and the
 * snapshots kept. The next fetch is derived from where the clock stands (never
 * stored), so pause, resume and an extension need no bookkeeping; fetches the
 * object slept through (an outage) are not replayed in a burst. A fetch is recorded by record.ts.
 */
import type { EngineStore } from "../../../kind/kind";
import { keysetPage } from "../../../kind/pages";
import { AppError } from "../../../http/errors";
import { iso, isoOrNull } from "../../../time";
import { cronOf } from "../cron";
import type { SnapshotConfig, SnapshotView } from "./schema";

type Clock = {
  paused: number;
  since: number | null;
  fetches: number;
  changes: number;
  failures: number;
  last_changed_at: number | null;
};

export type Row = {
  seq: number;
  fetched_at: number;
  manual: number;
  ok: number;
  status: number | null;
  error: string | null;
  final_url: string | null;
  headers: string;
  content_type: string | null;
  size: number | null;
  sha256: string | null;
  compare_sha256: string | null;
  selected_text: string | null;
  object_key: string | null;
  changed: number;
  duration_ms: number;
};

/** The module's tables as the kind's first migration creates them (see the kind's `migrations`). */
export const TABLES = [
  `CREATE TABLE snapshot_clock (
    id INTEGER PRIMARY KEY CHECK (id = 1), paused INTEGER NOT NULL,
    -- When the schedule last fetched (or was resumed); null until the first, the baseline.
    since INTEGER,
    fetches INTEGER NOT NULL, changes INTEGER NOT NULL, failures INTEGER NOT NULL, last_changed_at INTEGER)`,
  `CREATE TABLE snapshots (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, fetched_at INTEGER NOT NULL, manual INTEGER NOT NULL, ok INTEGER NOT NULL,
    status INTEGER, error TEXT, final_url TEXT, headers TEXT NOT NULL, content_type TEXT, size INTEGER,
    sha256 TEXT, compare_sha256 TEXT, selected_text TEXT, object_key TEXT, changed INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL)`,
  "CREATE INDEX snapshots_by_object ON snapshots (object_key)",
];

export function init(store: EngineStore): void {
  store.sql.exec(
    "INSERT INTO snapshot_clock (id, paused, since, fetches, changes, failures) VALUES (1, 0, NULL, 0, 0, 0)",
  );
}

export function clock(store: EngineStore): Clock {
  return store.sql
    .exec<Clock>("SELECT paused, since, fetches, changes, failures, last_changed_at FROM snapshot_clock")
    .one();
}

/** When the schedule fetches next, or null (paused, or nothing left before expiry). */
export function nextAt(store: EngineStore, config: SnapshotConfig): number | null {
  const c = clock(store);
  if (c.paused) return null;
  const start = config.start_at ? Date.parse(config.start_at) : store.createdAt;
  let at: number | null;
  if (c.since === null) at = Math.max(start, store.createdAt);
  else if (config.interval_seconds !== undefined) at = Math.max(c.since + config.interval_seconds * 1000, start);
  else
    at =
      cronOf(config.cron!, config.timezone, { startAt: config.start_at }).nextRun(new Date(c.since))?.getTime() ?? null;
  return at !== null && at < store.expiresAt ? at : null;
}

export function setPaused(store: EngineStore, paused: boolean): void {
  // Resuming restarts the clock at now (a baseline never taken is still taken at once).
  if (paused) store.sql.exec("UPDATE snapshot_clock SET paused = 1");
  else
    store.sql.exec(
      "UPDATE snapshot_clock SET paused = 0, since = CASE WHEN since IS NULL THEN NULL ELSE ? END",
      store.now,
    );
}

/** One snapshot by seq, or the newest; takes bare SQL so the read step (PrepareContext) can use it too. */
export function rowOf(sql: SqlStorage, seq: number | undefined): Row | undefined {
  return seq === undefined
    ? sql.exec<Row>("SELECT * FROM snapshots ORDER BY seq DESC LIMIT 1").toArray()[0]
    : sql.exec<Row>("SELECT * FROM snapshots WHERE seq = ?", seq).toArray()[0];
}

export function requireRow(store: EngineStore, seq: number | undefined): Row {
  const row = rowOf(store.sql, seq);
  if (!row)
    throw new AppError(
      "not_found",
      seq === undefined
        ? "No snapshot has been taken yet."
        : `No snapshot ${seq} is kept (older ones are pruned to keep_last).`,
    );
  return row;
}

export function view(store: EngineStore, r: Row): SnapshotView {
  return {
    seq: r.seq,
    fetched_at: iso(r.fetched_at),
    manual: r.manual === 1,
    ok: r.ok === 1,
    status: r.status,
    error: r.error,
    final_url: r.final_url,
    headers: JSON.parse(r.headers) as Record<string, string>,
    content_type: r.content_type,
    size: r.size,
    sha256: r.sha256,
    selected_text: r.selected_text,
    changed: r.changed === 1,
    content_url: r.object_key ? store.downloadUrl(r.object_key) : null,
    duration_ms: r.duration_ms,
  };
}

export function page(store: EngineStore, limit: number, cursor: string | undefined, changedOnly: boolean) {
  const rows = store.sql
    .exec<Row>(
      `SELECT * FROM snapshots WHERE seq < ? ${changedOnly ? "AND changed = 1" : ""} ORDER BY seq DESC LIMIT ?`,
      cursor ? Number(cursor) : Number.MAX_SAFE_INTEGER,
      limit + 1,
    )
    .toArray();
  return keysetPage(
    rows,
    limit,
    (r) => r.seq,
    (r) => view(store, r),
  );
}

export function allSnapshots(store: EngineStore): SnapshotView[] {
  return store.sql
    .exec<Row>("SELECT * FROM snapshots ORDER BY seq")
    .toArray()
    .map((r) => view(store, r));
}

export function status(store: EngineStore, config: SnapshotConfig) {
  const c = clock(store);
  const next = nextAt(store, config);
  const latest = rowOf(store.sql, undefined);
  return {
    url: config.url,
    interval_seconds: config.interval_seconds ?? null,
    cron: config.cron ?? null,
    timezone: config.timezone,
    paused: c.paused === 1,
    next_snapshot_at: isoOrNull(next),
    keep_last: config.keep_last,
    stored: store.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM snapshots").one().n,
    fetches: c.fetches,
    changes: c.changes,
    consecutive_failures: c.failures,
    last_changed_at: isoOrNull(c.last_changed_at),
    latest: latest ? view(store, latest) : null,
  };
}

export function usage(store: EngineStore) {
  const c = clock(store);
  const { n, bytes } = store.sql
    .exec<{ n: number; bytes: number | null }>(
      "SELECT (SELECT COUNT(*) FROM snapshots) AS n, (SELECT SUM(size) FROM (SELECT DISTINCT object_key, " +
        "size FROM snapshots WHERE object_key IS NOT NULL)) AS bytes",
    )
    .one();
  return { snapshots: n, stored_bytes: bytes ?? 0, fetches: c.fetches, changes: c.changes };
}
