/**
 * Firing a debouncer's windows: by the timer when a window has been quiet long
 * enough or reached its max_wait deadline, by flush on demand, and shortly before
 * the resource expires (so no open window is lost with it). A firing is one
 * debounce.fired request; the window then closes and the next event opens a new one.
 */
import type { EngineStore } from "../../../../kind/kind";
import { keysetPage } from "../../../../kind/pages";
import type { Json } from "../../../../json";
import { iso, isoOrNull } from "../../../../time";
import { sendEvent } from "../../../../delivery/events";
import { MAX_FIRED_KEPT, type DebounceConfig } from "../schema";
import { bump, dropWindow, eventsOf, keyOut, requireWindow, type WindowRow } from "./windows";

type Reason = "quiet" | "max_wait" | "flush" | "expiring";

type FiredRow = {
  seq: number;
  key: string;
  reason: Reason;
  opened_at: number;
  fired_at: number;
  received: number;
  sent: number;
  delivery_id: string;
  outcome: "pending" | "delivered" | "failed";
};

/** Windows fired per alarm run, so one run stays short; the alarm comes straight back for the rest. */
const BATCH = 50;
/** Open windows fire this long before the resource expires, rather than vanish with it. */
const BEFORE_EXPIRY_MS = 10_000;

/** The module's tables as the kind's first migration creates them (see the kind's `migrations`). */
export const TABLES = [
  `CREATE TABLE debounce_fired (seq INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL, reason TEXT NOT NULL,
    opened_at INTEGER NOT NULL, fired_at INTEGER NOT NULL, received INTEGER NOT NULL, sent INTEGER NOT NULL,
    delivery_id TEXT NOT NULL, outcome TEXT NOT NULL)`,
  "CREATE INDEX debounce_fired_delivery ON debounce_fired (delivery_id)",
];

const firingView = (r: FiredRow) => ({
  seq: r.seq,
  key: keyOut(r.key),
  reason: r.reason,
  opened_at: iso(r.opened_at),
  fired_at: iso(r.fired_at),
  received: r.received,
  sent: r.sent,
  dropped: r.received - r.sent,
  delivery_id: r.delivery_id,
  outcome: r.outcome,
});

function fireWindow(store: EngineStore, config: DebounceConfig, w: WindowRow, reason: Reason) {
  const events = eventsOf(store, w);
  const parsed = events.map((e) => ({
    received_at: iso(e.received_at),
    source: e.source,
    event: JSON.parse(e.body) as Json,
  }));
  const data = {
    key: keyOut(w.key),
    mode: config.mode,
    reason,
    opened_at: iso(w.opened_at),
    last_event_at: iso(w.last_event_at),
    received: w.received,
    dropped: w.received - events.length,
    // last: the newest event alone; all: every kept event, oldest first.
    ...(config.mode === "last" ? { event: parsed[parsed.length - 1]?.event ?? null } : { events: parsed }),
  };
  const deliveryId = sendEvent(
    store,
    { url: config.url, headers: config.headers },
    "debounce.fired",
    data,
    `window:${w.seq}`,
  );
  store.sql.exec(
    "INSERT INTO debounce_fired (key, reason, opened_at, fired_at, received, sent, delivery_id, outcome) " +
      "VALUES (?, ?, ?, ?, ?, ?, ?, 'pending')",
    w.key,
    reason,
    w.opened_at,
    store.now,
    w.received,
    events.length,
    deliveryId,
  );
  store.sql.exec("DELETE FROM debounce_fired WHERE seq <= (SELECT max(seq) FROM debounce_fired) - ?", MAX_FIRED_KEPT);
  dropWindow(store, w);
  bump(store, "fired");
  return firingView(store.sql.exec<FiredRow>("SELECT * FROM debounce_fired WHERE delivery_id = ?", deliveryId).one());
}

/** Why a window fires now: its deadline cut the quiet period short, or the quiet period ended. */
const reasonOf = (config: DebounceConfig, w: WindowRow): Reason =>
  w.last_event_at + config.quiet_seconds * 1000 > w.fire_by ? "max_wait" : "quiet";

const horizon = (store: EngineStore) => store.expiresAt - BEFORE_EXPIRY_MS;

export const timer = {
  nextDue: (store: EngineStore): number | null => {
    const due = store.sql.exec<{ at: number | null }>("SELECT min(due_at) AS at FROM debounce_windows").one().at;
    return due === null ? null : Math.min(due, horizon(store));
  },
  fire: (store: EngineStore, config: DebounceConfig): void => {
    const ending = store.now >= horizon(store);
    const due = store.sql
      .exec<WindowRow>(
        "SELECT * FROM debounce_windows WHERE due_at <= ? ORDER BY due_at LIMIT ?",
        ending ? Number.MAX_SAFE_INTEGER : store.now,
        BATCH,
      )
      .toArray();
    for (const w of due) fireWindow(store, config, w, w.due_at > store.now ? "expiring" : reasonOf(config, w));
  },
};

/** Fires now: one key's window, or every open one. */
export function flush(store: EngineStore, config: DebounceConfig, input: { key?: string; all?: boolean }) {
  const rows = input.all
    ? store.sql.exec<WindowRow>("SELECT * FROM debounce_windows ORDER BY seq").toArray()
    : [requireWindow(store, input.key ?? "")];
  return { fired: rows.map((w) => fireWindow(store, config, w, "flush")) };
}

export function nextFireAt(store: EngineStore): string | null {
  const at = timer.nextDue(store);
  return isoOrNull(at);
}

/** Newest first; the cursor is the last row's sequence number. */
export function listFired(store: EngineStore, limit: number, cursor: string | undefined) {
  const before = cursor === undefined ? Number.MAX_SAFE_INTEGER : Number(cursor);
  const rows = store.sql
    .exec<FiredRow>("SELECT * FROM debounce_fired WHERE seq < ? ORDER BY seq DESC LIMIT ?", before, limit + 1)
    .toArray();
  return keysetPage(rows, limit, (r) => r.seq, firingView);
}

export const allFired = (store: EngineStore) =>
  store.sql.exec<FiredRow>("SELECT * FROM debounce_fired ORDER BY seq").toArray().map(firingView);

export function finished(store: EngineStore, deliveryId: string, outcome: "delivered" | "aborted" | "dead"): void {
  store.sql.exec(
    "UPDATE debounce_fired SET outcome = ? WHERE delivery_id = ?",
    outcome === "delivered" ? "delivered" : "failed",
    deliveryId,
  );
}
