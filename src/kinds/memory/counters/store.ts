/**
 * Counter state inside its ResourceObject: one row, updated in the operation's
 * transaction. Reset windows are applied lazily (on the next read or write), so
 * a counter needs no alarm of its own.
 */
import { AppError } from "../../../http/errors";
import type { EngineStore } from "../../../kind/kind";
import type { CounterConfig } from "./schema";

type Row = {
  value: number;
  reset_window: number;
  updated_at: number;
};

/** The module's tables as the kind's first migration creates them (see the kind's `migrations`). */
export const TABLES = [
  "CREATE TABLE counter (id INTEGER PRIMARY KEY CHECK (id = 1), value INTEGER NOT NULL, reset_window " +
    "INTEGER NOT NULL, updated_at INTEGER NOT NULL)",
];

export function init(store: EngineStore, config: CounterConfig): void {
  store.sql.exec(
    "INSERT INTO counter (id, value, reset_window, updated_at) VALUES (1, ?, 0, ?)",
    config.initial,
    store.now,
  );
}

function windowIndex(store: EngineStore, config: CounterConfig): number {
  if (!config.reset_every_seconds) return 0;
  return Math.floor((store.now - store.createdAt) / (config.reset_every_seconds * 1000));
}

/** The current row, with the reset window applied. */
function read(store: EngineStore, config: CounterConfig): Row {
  const row = store.sql.exec<Row>("SELECT value, reset_window, updated_at FROM counter").one();
  const window = windowIndex(store, config);
  if (window === row.reset_window) return row;
  store.sql.exec("UPDATE counter SET value = ?, reset_window = ?, updated_at = ?", config.initial, window, store.now);
  return { value: config.initial, reset_window: window, updated_at: store.now };
}

export function view(store: EngineStore, config: CounterConfig, row: Row = read(store, config)) {
  const period = config.reset_every_seconds;
  return {
    value: row.value,
    min: config.min ?? null,
    max: config.max ?? null,
    updated_at: new Date(row.updated_at).toISOString(),
    window_resets_at: period ? new Date(store.createdAt + (row.reset_window + 1) * period * 1000).toISOString() : null,
  };
}

/** Writes `next` if it stays within the bounds and the safe-integer range; 409 otherwise. */
export function write(store: EngineStore, config: CounterConfig, next: number) {
  if (!Number.isSafeInteger(next)) throw new AppError("conflict", "The result would leave the safe integer range.");
  if (config.min !== undefined && next < config.min) {
    throw new AppError("conflict", `The result ${next} would go below the minimum ${config.min}.`);
  }
  if (config.max !== undefined && next > config.max) {
    throw new AppError("conflict", `The result ${next} would go above the maximum ${config.max}.`);
  }
  const row = { value: next, reset_window: windowIndex(store, config), updated_at: store.now };
  store.sql.exec(
    "UPDATE counter SET value = ?, reset_window = ?, updated_at = ?",
    row.value,
    row.reset_window,
    row.updated_at,
  );
  return view(store, config, row);
}

export function current(store: EngineStore, config: CounterConfig): number {
  return read(store, config).value;
}
