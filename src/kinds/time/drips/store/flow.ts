/**
 * When a drip releases: a sliding window over the period (at most `count`
 * releases begin in any span of period_seconds, so a target's own per-period
 * limit is never crossed, unlike a token bucket, which lets up to twice the
 * count through a window straddling a refill) and at most `max_parallel`
 * deliveries in flight. A delivery leaves flight when the pipeline reports it
 * delivered, aborted or dead; the alarm is armed again after that report, so
 * a full drip needs no polling.
 */
import { AppError } from "../../../../http/errors";
import type { EngineStore } from "../../../../kind/kind";
import { isoOrNull } from "../../../../time";
import { move, state, view, type MessageRow, type State } from "./messages";
import { MAX_PERIOD_SECONDS, MAX_RATE_COUNT, type DripConfig } from "../schema";

/** Released per alarm run, so one run stays short; the alarm comes straight back for the rest. */
const BATCH = 100;
const MAX_PERIOD_MS = MAX_PERIOD_SECONDS * 1000;

function inWindow(store: EngineStore, s: State): number {
  return store.sql
    .exec<{ n: number }>("SELECT count(*) AS n FROM drip_releases WHERE at > ?", store.now - s.period_ms)
    .one().n;
}

/** When the window next has room: now, or when the count-th latest release leaves it. */
function windowOpensAt(store: EngineStore, s: State): number {
  const kth = store.sql
    .exec<{ at: number }>("SELECT at FROM drip_releases ORDER BY at DESC LIMIT 1 OFFSET ?", s.rate_count - 1)
    .toArray()[0];
  return kth ? Math.max(store.now, kth.at + s.period_ms) : store.now;
}

/**
 * Keeps the latest MAX_RATE_COUNT releases of the last day: enough to find the count-th latest for any
 * rate, so a rate changed by POST /limits still counts what went out before the change.
 */
function forgetOldReleases(store: EngineStore): void {
  store.sql.exec(
    "DELETE FROM drip_releases WHERE at <= ? OR rowid NOT IN (SELECT rowid FROM drip_releases ORDER BY at " +
      "DESC LIMIT ?)",
    store.now - MAX_PERIOD_MS,
    MAX_RATE_COUNT,
  );
}

type Hold = { held_by: "paused" | "max_parallel" | "rate" | null; next: number | null };

function hold(store: EngineStore, s: State): Hold {
  if (s.pending === 0) return { held_by: null, next: null };
  if (s.paused) return { held_by: "paused", next: null };
  // Freed by a delivery's report, whose time nobody knows.
  if (s.in_flight >= s.max_parallel) return { held_by: "max_parallel", next: null };
  const next = windowOpensAt(store, s);
  return { held_by: next > store.now ? "rate" : null, next };
}

/** Sends a pending message now: into flight, and into the window. */
function release(store: EngineStore, config: DripConfig, row: MessageRow): void {
  const headers = JSON.parse(row.headers) as Record<string, string>;
  const deliveryId = store.send({
    url: config.url,
    method: config.method,
    headers,
    body: row.body,
    eventType: "drip.released",
  });
  move(store, row, "pending", "in_flight", deliveryId);
  store.sql.exec("INSERT INTO drip_releases (at) VALUES (?)", store.now);
}

function oldestPending(store: EngineStore, n: number): MessageRow[] {
  return store.sql
    .exec<MessageRow>("SELECT * FROM drip_messages WHERE status = 'pending' ORDER BY seq LIMIT ?", n)
    .toArray();
}

export const timer = {
  nextDue: (store: EngineStore): number | null => hold(store, state(store)).next,
  fire: (store: EngineStore, config: DripConfig): void => {
    const s = state(store);
    forgetOldReleases(store);
    if (s.paused) return;
    const room = Math.min(s.max_parallel - s.in_flight, s.rate_count - inWindow(store, s), BATCH);
    if (room <= 0) return;
    for (const row of oldestPending(store, room)) release(store, config, row);
  },
};

/** Releases now, past pause, rate and max_parallel; these releases count toward both afterwards. */
export function releaseNow(store: EngineStore, config: DripConfig, input: { count?: number; message_id?: string }) {
  let rows: MessageRow[];
  if (input.message_id) {
    const row = store.sql
      .exec<MessageRow>("SELECT * FROM drip_messages WHERE message_id = ?", input.message_id)
      .toArray()[0];
    if (!row) throw new AppError("not_found", `No message ${input.message_id} on this drip.`);
    if (row.status !== "pending")
      throw new AppError(
        "conflict",
        `Message ${input.message_id} is ${row.status}; only pending messages can be released.`,
      );
    rows = [row];
  } else {
    rows = oldestPending(store, input.count ?? 1);
  }
  for (const row of rows) release(store, config, row);
  forgetOldReleases(store);
  const fresh = (seq: number) => store.sql.exec<MessageRow>("SELECT * FROM drip_messages WHERE seq = ?", seq).one();
  return { released: rows.map((r) => view(fresh(r.seq))) };
}

export function setPaused(store: EngineStore, paused: boolean) {
  store.sql.exec("UPDATE drip_state SET paused = ?", paused ? 1 : 0);
  return statusView(store);
}

/**
 * Changes the pace in force (the record's config keeps what create accepted). Releases already made stay in the window.
 */
export function setLimits(
  store: EngineStore,
  input: { rate?: { count: number; period_seconds: number }; max_parallel?: number },
) {
  if (input.rate)
    store.sql.exec(
      "UPDATE drip_state SET rate_count = ?, period_ms = ?",
      input.rate.count,
      input.rate.period_seconds * 1000,
    );
  if (input.max_parallel !== undefined) store.sql.exec("UPDATE drip_state SET max_parallel = ?", input.max_parallel);
  return statusView(store);
}

export function statusView(store: EngineStore) {
  const s = state(store);
  const h = hold(store, s);
  return {
    paused: s.paused === 1,
    pending: s.pending,
    in_flight: s.in_flight,
    rate: { count: s.rate_count, period_seconds: s.period_ms / 1000 },
    max_parallel: s.max_parallel,
    released_in_window: inWindow(store, s),
    held_by: h.held_by,
    next_release_at: isoOrNull(h.next),
  };
}

export function usage(store: EngineStore) {
  const s = state(store);
  return {
    enqueued: s.pending + s.in_flight + s.delivered + s.failed + s.cancelled,
    pending: s.pending,
    in_flight: s.in_flight,
    delivered: s.delivered,
    failed: s.failed,
    cancelled: s.cancelled,
    backlog_bytes: s.backlog_bytes,
  };
}
