/** The ping log of a dead-man switch: the last MAX_PINGS_KEPT pings, newest first when listed. */
import type { EngineStore } from "../../../../kind/kind";
import { keysetPage } from "../../../../kind/pages";
import { iso } from "../../../../time";
import { utf8Prefix } from "../../../../bytes";
import { utf8Length } from "../../../../bytes";
import { MAX_PINGS_KEPT, PING_EXCERPT_BYTES, type Signal } from "../schema";

type PingRow = {
  seq: number;
  at: number;
  signal: Signal;
  exit_code: number | null;
  source: "public" | "api";
  method: string;
  body: string | null;
  body_bytes: number;
  duration_ms: number | null;
};

export interface PingEntry {
  signal: Signal;
  exitCode: number | null;
  source: "public" | "api";
  method: string;
  body: string | null;
  durationMs: number | null;
}

/** The module's tables as the kind's first migration creates them (see the kind's `migrations`). */
export const TABLES = [
  `CREATE TABLE deadman_pings (seq INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, signal TEXT NOT NULL,
    exit_code INTEGER, source TEXT NOT NULL, method TEXT NOT NULL, body TEXT, body_bytes INTEGER NOT NULL,
    duration_ms INTEGER)`,
];

export function logPing(store: EngineStore, p: PingEntry): void {
  const body = p.body === null ? null : utf8Prefix(p.body, PING_EXCERPT_BYTES);
  store.sql.exec(
    "INSERT INTO deadman_pings (at, signal, exit_code, source, method, body, body_bytes, duration_ms) " +
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    store.now,
    p.signal,
    p.exitCode,
    p.source,
    p.method,
    body,
    p.body === null ? 0 : utf8Length(p.body),
    p.durationMs,
  );
  // Sequence numbers have no gaps, so everything at or below (newest - MAX) is beyond the log's length.
  store.sql.exec("DELETE FROM deadman_pings WHERE seq <= (SELECT max(seq) FROM deadman_pings) - ?", MAX_PINGS_KEPT);
}

const view = (r: PingRow) => ({
  seq: r.seq,
  at: iso(r.at),
  signal: r.signal,
  exit_code: r.exit_code,
  source: r.source,
  method: r.method,
  body: r.body,
  body_bytes: r.body_bytes,
  duration_seconds: r.duration_ms === null ? null : r.duration_ms / 1000,
});

/** Newest first; the cursor is the last row's sequence number. */
export function listPings(store: EngineStore, limit: number, cursor: string | undefined) {
  const before = cursor === undefined ? Number.MAX_SAFE_INTEGER : Number(cursor);
  const rows = store.sql
    .exec<PingRow>("SELECT * FROM deadman_pings WHERE seq < ? ORDER BY seq DESC LIMIT ?", before, limit + 1)
    .toArray();
  return keysetPage(rows, limit, (r) => r.seq, view);
}

export function allPings(store: EngineStore) {
  return store.sql.exec<PingRow>("SELECT * FROM deadman_pings ORDER BY seq").toArray().map(view);
}
