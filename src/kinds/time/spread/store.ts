/**
 * spread: each member fires once per period at offset = hash(key) mod period,
 * on period boundaries counted from the Unix epoch, so a member keeps its slot
 * across restarts and N members land spread over the period.
 */
import { AppError } from "../../../http/errors";
import { keysetPage } from "../../../kind/pages";
import type { EngineStore } from "../../../kind/kind";
import { outgoingRequest } from "../../../delivery/outbound";
import { MAX_MEMBERS, type SpreadConfig } from "./schema";

type Row = { key: string; offset_ms: number; next_at: number; body: string | null; headers: string; fired: number };

/** Sent per alarm run; the alarm comes straight back for the rest. */
const BATCH = 100;

/** 32-bit FNV-1a: stable, cheap, evenly spread over the period. */
function hash(key: string): number {
  let h = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(key)) h = Math.imul(h ^ byte, 0x01000193) >>> 0;
  return h;
}

/** The first time after `now` that lies `offset` into a period. */
function nextAt(now: number, periodMs: number, offsetMs: number): number {
  const base = Math.floor((now - offsetMs) / periodMs) * periodMs + offsetMs;
  return base > now ? base : base + periodMs;
}

/** The module's tables as the kind's first migration creates them (see the kind's `migrations`). */
export const TABLES = [
  "CREATE TABLE spread_members (key TEXT PRIMARY KEY, offset_ms INTEGER NOT NULL, next_at INTEGER NOT " +
    "NULL, body TEXT, headers TEXT NOT NULL, fired INTEGER NOT NULL DEFAULT 0)",
  "CREATE INDEX spread_due ON spread_members (next_at)",
];

const view = (r: Row) => ({
  key: r.key,
  offset_seconds: Math.floor(r.offset_ms / 1000),
  next_fire_at: new Date(r.next_at).toISOString(),
  fired: r.fired,
});

export function count(store: EngineStore): number {
  return store.sql.exec<{ n: number }>("SELECT count(*) AS n FROM spread_members").one().n;
}

export function add(store: EngineStore, config: SpreadConfig, key: string, body: unknown) {
  const existing = store.sql.exec<Row>("SELECT * FROM spread_members WHERE key = ?", key).toArray()[0];
  if (!existing && count(store) >= MAX_MEMBERS)
    throw new AppError("payload_too_large", `A spread holds at most ${MAX_MEMBERS} members.`);
  const periodMs = config.period_seconds * 1000;
  const offsetMs = (hash(key) % config.period_seconds) * 1000;
  // Serialised now, with its content type, exactly as each firing will send it.
  const request = outgoingRequest(
    { url: "", method: "POST", headers: {}, body: (body ?? { key }) as string | Record<string, unknown> },
    "",
  );
  store.sql.exec(
    "INSERT INTO spread_members (key, offset_ms, next_at, body, headers) VALUES (?, ?, ?, ?, ?) ON " +
      "CONFLICT (key) DO UPDATE SET body = excluded.body, headers = excluded.headers",
    key,
    offsetMs,
    nextAt(store.now, periodMs, offsetMs),
    request.body,
    JSON.stringify(request.headers),
  );
  return view(store.sql.exec<Row>("SELECT * FROM spread_members WHERE key = ?", key).one());
}

export function remove(store: EngineStore, key: string) {
  const row = store.sql.exec<Row>("SELECT * FROM spread_members WHERE key = ?", key).toArray()[0];
  if (!row) throw new AppError("not_found", `No member ${key}.`);
  store.sql.exec("DELETE FROM spread_members WHERE key = ?", key);
  return view(row);
}

export function list(store: EngineStore, limit: number, cursor: string | undefined) {
  const rows = store.sql
    .exec<Row>("SELECT * FROM spread_members WHERE key > ? ORDER BY key LIMIT ?", cursor ?? "", limit + 1)
    .toArray();
  return keysetPage(rows, limit, (r) => r.key, view);
}

export function previewFires(store: EngineStore, config: SpreadConfig, n: number) {
  const periodMs = config.period_seconds * 1000;
  const rows = store.sql.exec<Row>("SELECT * FROM spread_members ORDER BY next_at LIMIT ?", n).toArray();
  // Enough periods to list n fires even with few members.
  const fires = rows.flatMap((r) =>
    Array.from({ length: Math.ceil(n / Math.max(1, rows.length)) }, (_, i) => ({
      key: r.key,
      at: r.next_at + i * periodMs,
    })),
  );
  fires.sort((a, b) => a.at - b.at);
  return { fires: fires.slice(0, n).map((f) => ({ key: f.key, at: new Date(f.at).toISOString() })) };
}

export const timer = {
  nextDue: (store: EngineStore): number | null =>
    store.sql.exec<{ at: number | null }>("SELECT min(next_at) AS at FROM spread_members").one().at,
  fire: (store: EngineStore, config: SpreadConfig): void => {
    const periodMs = config.period_seconds * 1000;
    const due = store.sql
      .exec<Row>("SELECT * FROM spread_members WHERE next_at <= ? ORDER BY next_at LIMIT ?", store.now, BATCH)
      .toArray();
    for (const row of due) {
      const headers = { ...config.headers, ...(JSON.parse(row.headers) as Record<string, string>) };
      store.send({ url: config.url, method: config.method, headers, body: row.body, eventType: "spread.fired" });
      store.sql.exec(
        "UPDATE spread_members SET next_at = ?, fired = fired + 1 WHERE key = ?",
        nextAt(store.now, periodMs, row.offset_ms),
        row.key,
      );
    }
  },
};
