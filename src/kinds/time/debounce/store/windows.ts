/**
 * A debouncer's open windows, one per key, and the events they hold. Each event
 * pushes its window's firing time to quiet_seconds later, but never past the
 * window's max_wait deadline (fixed by its first event). In mode `last` a window
 * keeps only its newest event; in mode `all` its newest events within
 * MAX_EVENTS_PER_WINDOW and MAX_WINDOW_BYTES, older ones dropped and counted.
 */
import { AppError } from "../../../../http/errors";
import { keysetPage } from "../../../../kind/pages";
import type { EngineStore } from "../../../../kind/kind";
import type { Json } from "../../../../json";
import { iso } from "../../../../time";
import { utf8Length } from "../../../../bytes";
import {
  MAX_EVENT_BYTES,
  MAX_EVENTS_PER_WINDOW,
  MAX_KEY_LENGTH,
  MAX_OPEN_WINDOWS,
  MAX_WINDOW_BYTES,
  type DebounceConfig,
} from "../schema";

export type WindowRow = {
  seq: number;
  key: string;
  opened_at: number;
  last_event_at: number;
  due_at: number;
  fire_by: number;
  received: number;
  kept: number;
  bytes: number;
};

export type EventRow = {
  seq: number;
  window_seq: number;
  received_at: number;
  source: "api" | "public";
  body: string;
  bytes: number;
};

export interface IncomingEvent {
  event: Json;
  /** Given by the caller; otherwise read at key_path, else the unkeyed window (""). */
  key: string | undefined;
  source: "api" | "public";
}

/** The module's tables as the kind's first migration creates them (see the kind's `migrations`). */
export const TABLES = [
  "CREATE TABLE debounce_counts (id INTEGER PRIMARY KEY CHECK (id = 1), events INTEGER NOT NULL, fired " +
    "INTEGER NOT NULL, cancelled INTEGER NOT NULL)",
  `CREATE TABLE debounce_windows (seq INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL UNIQUE,
    opened_at INTEGER NOT NULL, last_event_at INTEGER NOT NULL, due_at INTEGER NOT NULL, fire_by INTEGER NOT NULL,
    received INTEGER NOT NULL, kept INTEGER NOT NULL, bytes INTEGER NOT NULL)`,
  "CREATE INDEX debounce_due ON debounce_windows (due_at)",
  `CREATE TABLE debounce_events (seq INTEGER PRIMARY KEY AUTOINCREMENT, window_seq INTEGER NOT NULL,
    received_at INTEGER NOT NULL, source TEXT NOT NULL, body TEXT NOT NULL, bytes INTEGER NOT NULL)`,
  "CREATE INDEX debounce_events_window ON debounce_events (window_seq, seq)",
];

export function initWindows(store: EngineStore): void {
  store.sql.exec("INSERT INTO debounce_counts VALUES (1, 0, 0, 0)");
}

export type Counts = { events: number; fired: number; cancelled: number };
export const counts = (store: EngineStore) =>
  store.sql.exec<Counts>("SELECT events, fired, cancelled FROM debounce_counts").one();
export const bump = (store: EngineStore, column: keyof Counts, by = 1) =>
  void store.sql.exec(`UPDATE debounce_counts SET ${column} = ${column} + ?`, by);

export const openWindows = (store: EngineStore): number =>
  store.sql.exec<{ n: number }>("SELECT count(*) AS n FROM debounce_windows").one().n;

export const windowByKey = (store: EngineStore, key: string) =>
  store.sql.exec<WindowRow>("SELECT * FROM debounce_windows WHERE key = ?", key).toArray()[0];

export const eventsOf = (store: EngineStore, w: WindowRow) =>
  store.sql.exec<EventRow>("SELECT * FROM debounce_events WHERE window_seq = ? ORDER BY seq", w.seq).toArray();

/** The key at key_path in a JSON event: a non-empty string, or a finite number as text. */
function keyAtPath(config: DebounceConfig, event: Json): string | undefined {
  if (!config.key_path) return undefined;
  let value: Json | undefined = event;
  for (const part of config.key_path.split(".")) {
    value = value !== null && typeof value === "object" && !Array.isArray(value) ? value[part] : undefined;
  }
  if (typeof value === "string" && value !== "") return value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return undefined;
}

export const keyOut = (key: string): string | null => (key === "" ? null : key);

export function windowView(w: WindowRow) {
  return {
    key: keyOut(w.key),
    opened_at: iso(w.opened_at),
    last_event_at: iso(w.last_event_at),
    fires_at: iso(w.due_at),
    fire_by: iso(w.fire_by),
    received: w.received,
    kept: w.kept,
    dropped: w.received - w.kept,
    bytes: w.bytes,
  };
}

export function windowDetail(store: EngineStore, w: WindowRow) {
  const events = eventsOf(store, w).map((e) => ({
    received_at: iso(e.received_at),
    source: e.source,
    event: JSON.parse(e.body) as Json,
  }));
  return { ...windowView(w), events };
}

function openWindow(store: EngineStore, config: DebounceConfig, key: string): WindowRow {
  if (openWindows(store) >= MAX_OPEN_WINDOWS) {
    throw new AppError(
      "validation_failed",
      `At most ${MAX_OPEN_WINDOWS} windows are open at once; flush or cancel some, or wait for them to fire.`,
      {
        errors: [{ path: "key", message: `a new key beyond ${MAX_OPEN_WINDOWS} open windows` }],
      },
    );
  }
  store.sql.exec(
    "INSERT INTO debounce_windows (key, opened_at, last_event_at, due_at, fire_by, received, kept, bytes) " +
      "VALUES (?, ?, ?, ?, ?, 0, 0, 0)",
    key,
    store.now,
    store.now,
    store.now,
    store.now + config.max_wait_seconds * 1000,
  );
  return windowByKey(store, key)!;
}

/** Adds an event to its key's window (opening it), moves the window's firing time, and trims what it keeps. */
export function addEvent(store: EngineStore, config: DebounceConfig, incoming: IncomingEvent) {
  const body = JSON.stringify(incoming.event);
  const bytes = utf8Length(body);
  if (bytes > MAX_EVENT_BYTES)
    throw new AppError(
      "payload_too_large",
      `The event is ${bytes} bytes as JSON; at most ${MAX_EVENT_BYTES} are taken.`,
    );
  const key = incoming.key ?? keyAtPath(config, incoming.event) ?? "";
  if (key.length > MAX_KEY_LENGTH)
    throw new AppError("validation_failed", `Keys are at most ${MAX_KEY_LENGTH} characters.`, {
      errors: [{ path: "key", message: `at most ${MAX_KEY_LENGTH} characters` }],
    });
  const w = windowByKey(store, key) ?? openWindow(store, config, key);
  if (config.mode === "last") store.sql.exec("DELETE FROM debounce_events WHERE window_seq = ?", w.seq);
  store.sql.exec(
    "INSERT INTO debounce_events (window_seq, received_at, source, body, bytes) VALUES (?, ?, ?, ?, ?)",
    w.seq,
    store.now,
    incoming.source,
    body,
    bytes,
  );
  // Newest first wins: drop the oldest until the window fits (a single event always fits).
  for (;;) {
    const held = store.sql
      .exec<{ n: number; b: number }>(
        "SELECT count(*) AS n, coalesce(sum(bytes), 0) AS b FROM debounce_events WHERE window_seq = ?",
        w.seq,
      )
      .one();
    if (held.n <= MAX_EVENTS_PER_WINDOW && held.b <= MAX_WINDOW_BYTES) {
      const dueAt = Math.min(store.now + config.quiet_seconds * 1000, w.fire_by);
      store.sql.exec(
        "UPDATE debounce_windows SET last_event_at = ?, due_at = ?, received = received + 1, kept = ?, " +
          "bytes = ? WHERE seq = ?",
        store.now,
        dueAt,
        held.n,
        held.b,
        w.seq,
      );
      break;
    }
    store.sql.exec(
      "DELETE FROM debounce_events WHERE seq = (SELECT min(seq) FROM debounce_events WHERE window_seq = ?)",
      w.seq,
    );
  }
  bump(store, "events");
  return { key: keyOut(key), window: windowView(windowByKey(store, key)!) };
}

export function listWindows(store: EngineStore, limit: number, cursor: string | undefined) {
  const rows = store.sql
    .exec<WindowRow>(
      "SELECT * FROM debounce_windows WHERE seq > ? ORDER BY seq LIMIT ?",
      Number(cursor ?? 0),
      limit + 1,
    )
    .toArray();
  return keysetPage(rows, limit, (r) => r.seq, windowView);
}

export const allWindows = (store: EngineStore) =>
  store.sql
    .exec<WindowRow>("SELECT * FROM debounce_windows ORDER BY seq")
    .toArray()
    .map((w) => windowDetail(store, w));

export function requireWindow(store: EngineStore, key: string): WindowRow {
  const w = windowByKey(store, key);
  if (!w)
    throw new AppError("not_found", key === "" ? "The unkeyed window is not open." : `No open window for key ${key}.`);
  return w;
}

export function dropWindow(store: EngineStore, w: WindowRow): void {
  store.sql.exec("DELETE FROM debounce_events WHERE window_seq = ?", w.seq);
  store.sql.exec("DELETE FROM debounce_windows WHERE seq = ?", w.seq);
}

/** Closes windows without firing them: one key's, or all. */
export function cancelWindows(store: EngineStore, input: { key?: string; all?: boolean }) {
  const rows = input.all
    ? store.sql.exec<WindowRow>("SELECT * FROM debounce_windows ORDER BY seq").toArray()
    : [requireWindow(store, input.key ?? "")];
  for (const w of rows) dropWindow(store, w);
  bump(store, "cancelled", rows.length);
  return { cancelled: rows.map(windowView) };
}
