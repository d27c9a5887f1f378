/**
 * Recording a fetch and what follows from it: the counters, the events, and pruning to keep_last.
 *
 * `changed` compares with the newest good (2xx) snapshot only: a failed fetch
 * is recorded but is neither a change nor a baseline, so an outage followed by
 * the same content again is not reported twice. That baseline is kept even
 * when keep_last would prune it.
 */
import type { EngineStore } from "../../../kind/kind";
import { iso } from "../../../time";
import { sendEvent } from "../../../delivery/events";
import { held, type Fetched } from "./fetch";
import type { SnapshotConfig, SnapshotView } from "./schema";
import { clock, nextAt, view, type Row } from "./store";

export const timer = {
  nextDue: nextAt,
  fire(store: EngineStore, config: SnapshotConfig, fetched: Fetched): void {
    record(store, config, fetched, false);
    // The clock moves to now: the next fetch is an interval (or the next tick) after this one.
    store.sql.exec("UPDATE snapshot_clock SET since = ?", store.now);
  },
};

const lastGood = (store: EngineStore) =>
  store.sql.exec<Row>("SELECT * FROM snapshots WHERE ok = 1 ORDER BY seq DESC LIMIT 1").toArray()[0];

/** Records one fetch (scheduled or manual): the row, the counters, the events, and pruning to keep_last. */
export function record(store: EngineStore, config: SnapshotConfig, f: Fetched, manual: boolean): SnapshotView {
  const ok = f.status !== null && f.error === null;
  // Content found already stored, whose last holder was pruned while this fetch ran, is gone: keep the facts, not a
  // dead link.
  const key = f.key && (f.wrote || held(store.sql, f.key)) ? f.key : null;
  const previous = ok ? lastGood(store) : undefined;
  const changed = ok && previous !== undefined && previous.compare_sha256 !== f.compareSha256;
  const row = store.sql
    .exec<Row>(
      `INSERT INTO snapshots (fetched_at, manual, ok, status, error, final_url, headers, content_type, size, sha256,
           compare_sha256, selected_text, object_key, changed, duration_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
      f.fetchedAt,
      manual ? 1 : 0,
      ok ? 1 : 0,
      f.status,
      f.error,
      f.finalUrl,
      JSON.stringify(f.headers),
      f.contentType,
      f.size,
      f.sha256,
      f.compareSha256,
      f.selectedText,
      key,
      changed ? 1 : 0,
      f.durationMs,
    )
    .one();
  const before = clock(store);
  store.sql.exec(
    "UPDATE snapshot_clock SET fetches = fetches + 1, changes = changes + ?, failures = ?, last_changed_at = ?",
    changed ? 1 : 0,
    ok ? 0 : before.failures + 1,
    changed ? store.now : before.last_changed_at,
  );
  const snapshot = view(store, row);
  if (changed)
    notify(
      store,
      config,
      "snapshot.changed",
      {
        url: config.url,
        snapshot,
        previous: {
          seq: previous!.seq,
          fetched_at: iso(previous!.fetched_at),
          sha256: previous!.sha256,
          selected_text: previous!.selected_text,
        },
      },
      row.seq,
    );
  // Once per outage, not once per failed fetch.
  if (!ok && before.failures === 0)
    notify(store, config, "snapshot.failed", { url: config.url, snapshot, consecutive_failures: 1 }, row.seq);
  prune(store, config);
  return snapshot;
}

/**
 * Where events go: webhook_url, else the resource's notify_url. The engine is not handed notify_url, so it
 * is read from the object's meta row (durable-objects/resource/meta.ts).
 */
function eventTarget(store: EngineStore, config: SnapshotConfig): string | null {
  return config.webhook_url ?? store.notifyUrl;
}

function notify(
  store: EngineStore,
  config: SnapshotConfig,
  type: string,
  data: Record<string, unknown>,
  seq: number,
): void {
  const url = eventTarget(store, config);
  // The event id derives from the snapshot it announces, so a receiver can deduplicate on it.
  if (url) sendEvent(store, { url }, type, data, String(seq));
}

/**
 * Keeps the newest keep_last snapshots and the newest good one; objects no kept snapshot shares are deleted after
 * commit.
 */
function prune(store: EngineStore, config: SnapshotConfig): void {
  const cutoff = store.sql
    .exec<{ seq: number }>("SELECT seq FROM snapshots ORDER BY seq DESC LIMIT 1 OFFSET ?", config.keep_last - 1)
    .toArray()[0]?.seq;
  if (cutoff === undefined) return;
  const baseline = lastGood(store)?.seq ?? 0;
  const keys = store.sql
    .exec<{ object_key: string }>(
      "SELECT DISTINCT object_key FROM snapshots WHERE seq < ? AND seq != ? AND object_key IS NOT NULL",
      cutoff,
      baseline,
    )
    .toArray()
    .map((r) => r.object_key);
  store.sql.exec("DELETE FROM snapshots WHERE seq < ? AND seq != ?", cutoff, baseline);
  const unheld = keys.filter((k) => !held(store.sql, k));
  if (unheld.length) store.dropObjects(unheld);
}
