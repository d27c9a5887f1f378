/** A watch's two tables, its state and its check history, and how their rows read. */
import type { WatchState } from "./schema";

export type StateRow = {
  state: WatchState;
  failures: number;
  successes: number;
  checks: number;
  failed_total: number;
  changes: number;
  alerts: number;
  down_at: number | null;
  last_alert_at: number | null;
  down_alerts: number;
  next_check_at: number | null;
  memo: string | null;
  last_ping_at: number | null;
  last_ping_failed: number;
};
export type CheckRow = {
  seq: number;
  at: number;
  scheduled_at: number | null;
  ok: number;
  status: number | null;
  duration_ms: number | null;
  error: string | null;
  value: string | null;
  changed: number;
  excerpt: string | null;
};

export const TABLES = [
  `CREATE TABLE watch_state (id INTEGER PRIMARY KEY CHECK (id = 1), state TEXT NOT NULL,
    failures INTEGER NOT NULL DEFAULT 0, successes INTEGER NOT NULL DEFAULT 0, checks INTEGER NOT NULL DEFAULT 0,
    failed_total INTEGER NOT NULL DEFAULT 0, changes INTEGER NOT NULL DEFAULT 0, alerts INTEGER NOT NULL DEFAULT 0,
    down_at INTEGER, last_alert_at INTEGER, down_alerts INTEGER NOT NULL DEFAULT 0, next_check_at INTEGER, memo TEXT,
    last_ping_at INTEGER, last_ping_failed INTEGER NOT NULL DEFAULT 0)`,
  `CREATE TABLE watch_checks (seq INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, scheduled_at INTEGER,
    ok INTEGER NOT NULL, status INTEGER, duration_ms INTEGER, error TEXT, value TEXT, changed INTEGER NOT NULL,
    excerpt TEXT)`,
];

export const readState = (sql: SqlStorage) => sql.exec<StateRow>("SELECT * FROM watch_state").one();
