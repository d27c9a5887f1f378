/** The read side of a watch: its checks as the API shows them, its status and its history. */
import type { Json } from "../../../json";
import type { EngineStore } from "../../../kind/kind";
import { keysetPage } from "../../../kind/pages";
import { iso, isoOrNull } from "../../../time";
import { subscribers } from "../signals";
import type { WatchConfig } from "./schema";
import { readState, type CheckRow } from "./tables";

export const checkView = (r: CheckRow) => ({
  seq: r.seq,
  at: iso(r.at),
  scheduled_at: isoOrNull(r.scheduled_at),
  ok: r.ok === 1,
  status: r.status,
  duration_ms: r.duration_ms,
  error: r.error,
  value: r.value === null ? null : (JSON.parse(r.value) as Json),
  changed: r.changed === 1,
  excerpt: r.excerpt,
});

/** The failing (or recovering) check, as an event carries it. */
export const evidence = (r: CheckRow) => {
  const { seq: _seq, ...shown } = checkView(r);
  return shown;
};

export function lastCheck(sql: SqlStorage) {
  const r = sql.exec<CheckRow>("SELECT * FROM watch_checks ORDER BY seq DESC LIMIT 1").toArray()[0];
  return r ? checkView(r) : null;
}

export function statusView(store: EngineStore, config: WatchConfig) {
  const row = readState(store.sql);
  return {
    state: row.state,
    check_type: config.check.type,
    consecutive_failures: row.failures,
    consecutive_successes: row.successes,
    checks: row.checks,
    failures: row.failed_total,
    changes: row.changes,
    alerts_sent: row.alerts,
    down_since: isoOrNull(row.down_at),
    last_check: lastCheck(store.sql),
    next_check_at: row.state === "paused" ? null : isoOrNull(row.next_check_at),
    last_ping_at: isoOrNull(row.last_ping_at),
    followers: subscribers(store.sql).length,
  };
}

const FILTERS = { all: "", failures: "AND ok = 0", changes: "AND changed = 1" } as const;

/** Newest first; the cursor is the last row's sequence number. */
export function history(store: EngineStore, limit: number, cursor: string | undefined, only: keyof typeof FILTERS) {
  const before = cursor === undefined ? Number.MAX_SAFE_INTEGER : Number(cursor);
  const rows = store.sql
    .exec<CheckRow>(
      `SELECT * FROM watch_checks WHERE seq < ? ${FILTERS[only]} ORDER BY seq DESC LIMIT ?`,
      before,
      limit + 1,
    )
    .toArray();
  return keysetPage(rows, limit, (r) => r.seq, checkView);
}

export const allChecks = (sql: SqlStorage) =>
  sql.exec<CheckRow>("SELECT * FROM watch_checks ORDER BY seq").toArray().map(checkView);
