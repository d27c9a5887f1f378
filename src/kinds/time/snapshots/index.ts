/**
 * snapshots: a URL fetched on an interval or a cron, each answer kept in R2 with
 * its status, headers, sha256 and size, flagged `changed` against the last good
 * one, the newest keep_last kept, and an event on change (Internet Archive SPN2,
 * changedetection.io). A CSS selector narrows what counts as a change; not
 * offered: XPath and regex filters (a caller's regex can run away with the
 * object's CPU), and diffs (the agent holds both versions through content_url).
 */
import { noInput } from "../../../openapi/schemas";
import { kindOf } from "../../../kind/kind";
import { discardSnapshot, readText, takeSnapshot } from "./fetch";
import { allSnapshots, init, page, requireRow, rowOf, setPaused, status, usage, view } from "./store";
import { record, timer } from "./record";
import {
  INLINE_MAX_BYTES,
  listInput,
  readInput,
  snapshot,
  snapshotConfig,
  snapshotPage,
  snapshotStatus,
  snapshotWithContent,
  type ReadInput,
  type SnapshotConfig,
  MAX_BODY_BYTES,
  MAX_KEEP_LAST,
} from "./schema";
import { TABLES } from "./store";

const OP_PRICE = 100; // µUSD
/** A fetch of up to 10 MiB, its hash, and an R2 write when the content is new. */
const TAKE_PRICE = 1000;

const kind = kindOf<SnapshotConfig>();

export const snapshots = kind.define({
  kind: "snapshots",
  family: "time",
  title: "URL snapshots",
  summary:
    "A URL fetched every interval_seconds or on a cron; each answer kept with status, headers, sha256 and " +
    "size, `changed` against the last good one, keep_last kept, an event on change; snapshot now, " +
    "pause/resume.",
  targetFields: ["url", "webhook_url"],
  createSchema: snapshotConfig,
  example: {
    url: "https://example.com/pricing",
    interval_seconds: 3600,
    selector: "#price",
    ignore_whitespace: true,
    keep_last: 10,
  },
  migrations: [{ sql: TABLES }],
  // Covers the most a resource can do in a day: 1440 fetches (one a minute), each new content an R2 write.
  dayPriceMicro: 10_000,
  defaultTtlSeconds: 30 * 86400,
  maxTtlSeconds: 366 * 86400,
  limits: { max_body_bytes: MAX_BODY_BYTES, max_keep_last: MAX_KEEP_LAST },
  sends: {
    "snapshot.changed":
      "Event to webhook_url (else notify_url): a snapshot's content differs from the previous good one. " +
      "data: url, snapshot (with content_url), previous { seq, fetched_at, sha256, selected_text }.",
    "snapshot.failed":
      "Event to webhook_url (else notify_url): a fetch failed (no answer, or not 2xx) after a good one or " +
      "as the first; sent once per outage. data: url, snapshot, consecutive_failures.",
  },
  init: (store) => init(store),
  usage: (store) => usage(store),
  status: (store, config) => status(store, config),
  exportData: (store, config) => ({ ...status(store, config), snapshots: allSnapshots(store) }),
  timer: kind.timer({
    nextDue: timer.nextDue,
    prepare: (ctx, config) => takeSnapshot(ctx, config),
    fire: (store, config, prepared) => timer.fire(store, config, prepared),
    discard: (ctx, prepared) => discardSnapshot(ctx, prepared),
  }),
  ops: [
    kind.op({
      name: "get",
      method: "get",
      path: "",
      summary: "Status: schedule, next fetch, counters and the newest snapshot",
      priceMicro: OP_PRICE,
      input: noInput,
      output: snapshotStatus,
      run: (store, config) => status(store, config),
    }),
    kind.op({
      name: "list",
      method: "get",
      path: "/snapshots",
      summary: "Kept snapshots, newest first (optionally only changes)",
      priceMicro: OP_PRICE,
      input: listInput,
      output: snapshotPage,
      example: { input: { changed_only: "true", limit: 20 } },
      run: (store, _config, input) => page(store, input.limit, input.cursor, input.changed_only),
    }),
    kind.op({
      name: "take",
      method: "post",
      path: "/snapshots",
      summary: "Take a snapshot now (the schedule is unchanged); a failed fetch is recorded and returned",
      priceMicro: TAKE_PRICE,
      input: noInput,
      output: snapshot,
      prepare: (ctx, config) => takeSnapshot(ctx, config),
      run: (store, config, _input, fetched) => record(store, config, fetched, true),
      discard: (ctx, fetched) => discardSnapshot(ctx, fetched),
    }),
    kind.op({
      name: "read",
      method: "get",
      path: "/snapshot",
      summary: `One snapshot (default the newest), with a text body up to ${INLINE_MAX_BYTES} bytes inline`,
      priceMicro: OP_PRICE,
      input: readInput,
      output: snapshotWithContent,
      errors: [404],
      example: { input: { include_content: "true" }, after: ["take"] },
      // The body is in R2, which the synchronous step cannot read: this step does, and pins which snapshot it read.
      prepare: async (ctx, _config, input: ReadInput) => {
        const row = rowOf(ctx.sql, input.seq);
        const wanted = row?.object_key && input.include_content && (row.size ?? 0) <= INLINE_MAX_BYTES;
        return { seq: row?.seq, content: wanted ? await readText(ctx, row.object_key!, row.content_type) : null };
      },
      run: (store, _config, input, read: { seq: number | undefined; content: string | null }) => ({
        ...view(store, requireRow(store, read.seq ?? input.seq)),
        content: read.content,
      }),
    }),
    kind.op({
      name: "pause",
      method: "post",
      path: "/pause",
      summary: "Pause the schedule (snapshot now still works)",
      priceMicro: OP_PRICE,
      input: noInput,
      output: snapshotStatus,
      run: (store, config) => {
        setPaused(store, true);
        return status(store, config);
      },
    }),
    kind.op({
      name: "resume",
      method: "post",
      path: "/resume",
      summary: "Resume: the next fetch is an interval (or the next tick) from now",
      priceMicro: OP_PRICE,
      input: noInput,
      output: snapshotStatus,
      run: (store, config) => {
        setPaused(store, false);
        return status(store, config);
      },
    }),
  ],
});
