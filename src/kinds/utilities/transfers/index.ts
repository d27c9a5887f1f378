/**
 * transfers: server-side copies between HTTP(S) URLs, S3-compatible buckets (SigV4, multipart) and
 * the owner's own blobs and objects, streamed part by part (never whole in memory), with progress,
 * a SHA-256 of every byte moved and the ETag each store reports. The start checks both ends before
 * it is charged; the resource's alarm moves the bytes (steps.ts), resumable from the last part.
 */
import { noInput } from "../../../openapi/schemas";
import { kindOf } from "../../../kind/kind";
import { abortOpen, discardStart, reopen, run, start, RUN_BUDGET_MS } from "./steps";
import { all, DROP_HASH_STATE, found, insert, openUploads, page, TABLES, usage, view } from "./store";
import { nextDue, recordStep } from "./runs";
import { cancel, cancellable, remove, resumable, resume } from "./controls";
import {
  MAX_TRANSFER_BYTES,
  MAX_TRANSFERS,
  PART_BYTES,
  startInput,
  transferIdParam,
  transfersCreate,
  transfersInput,
  transfersPage,
  transferView,
  type TransfersConfig,
} from "./schema";

const START_PRICE = 10_000; // µUSD, $0.01 a transfer
const OP_PRICE = 100; // $0.0001
const EXAMPLE_ID = { transfer_id: "trf_0123456789abcdefABCDEF" };
/**
 * The example transfer stays running for a while (its destination is down: each run fails and is retried
 * later), so the examples after it can cancel it, resume it and delete it as they are run.
 */
const EXAMPLE_START = {
  source: { type: "url", url: "https://example.com/files/pixel.png" },
  destination: { type: "url", url: "https://example.com/down/transfer-example" },
};

const kind = kindOf<TransfersConfig>();

export const transfers = kind.define({
  kind: "transfers",
  family: "utilities",
  title: "Transfers",
  summary:
    "Server-side copies between HTTP(S) URLs, S3-compatible buckets (SigV4; multipart) and your own blobs " +
    "and objects, streamed part by part, with progress (bytes, percent, rate), the SHA-256 of every byte " +
    "and the stores' ETags; a transfer that fails part-way resumes from the last part moved.",
  createSchema: transfersCreate,
  example: {},
  migrations: [{ sql: TABLES }, { sql: DROP_HASH_STATE }],
  dayPriceMicro: 1000,
  defaultTtlSeconds: 7 * 86400,
  maxTtlSeconds: 90 * 86400,
  limits: {
    max_transfer_bytes: MAX_TRANSFER_BYTES,
    part_bytes: PART_BYTES,
    max_transfers: MAX_TRANSFERS,
    run_seconds: RUN_BUDGET_MS / 1000,
  },
  usage: (store) => usage(store.sql),
  exportData: (store) => ({ transfers: all(store.sql, store.now) }),
  timer: kind.timer({
    nextDue: (store) => nextDue(store.sql, store.now),
    prepare: (ctx) => run(ctx),
    fire: (store, _config, stepped) => void (stepped && recordStep(store, stepped)),
  }),
  end: async (ctx) => {
    for (const row of openUploads(ctx.sql)) await abortOpen(ctx, row);
  },
  ops: [
    kind.op({
      name: "start",
      method: "post",
      path: "/transfers",
      summary: "Start a transfer: both ends are checked and the source's size learnt before it is charged",
      priceMicro: START_PRICE,
      input: startInput,
      output: transferView,
      errors: [413, 502, 507],
      example: { input: EXAMPLE_START },
      prepare: (ctx, _config, input) => start(ctx, input),
      run: (store, _config, _input, started) => insert(store, started),
      discard: (ctx, started) => discardStart(ctx, started),
    }),
    kind.op({
      name: "list_transfers",
      method: "get",
      path: "/transfers",
      summary: "Transfers, newest first",
      priceMicro: OP_PRICE,
      input: transfersInput,
      output: transfersPage,
      example: { input: { limit: 20 } },
      run: (store, _config, input) => page(store.sql, store.now, input.limit, input.cursor),
    }),
    kind.op({
      name: "get_transfer",
      method: "get",
      path: "/transfers/{transfer_id}",
      summary: "A transfer's status, progress and checksums",
      priceMicro: OP_PRICE,
      params: transferIdParam,
      input: noInput,
      output: transferView,
      errors: [404],
      example: { params: EXAMPLE_ID, after: ["start"] },
      run: (store, _config, input) => view(store.sql, found(store.sql, input.transfer_id), store.now),
    }),
    kind.op({
      name: "resume",
      method: "post",
      path: "/transfers/{transfer_id}/resume",
      summary: "Run a failed transfer again from the last part it moved, or a cancelled one from the start",
      priceMicro: OP_PRICE,
      params: transferIdParam,
      input: noInput,
      output: transferView,
      errors: [404, 409],
      example: { params: EXAMPLE_ID, after: ["start", "cancel"] },
      prepare: (ctx, _config, input) => reopen(ctx, resumable(ctx.sql, input.transfer_id)),
      run: (store, _config, input, reopened) => resume(store, input.transfer_id, reopened.upload_id),
      discard: async (ctx, reopened) => {
        if (reopened.status === "cancelled") await abortOpen(ctx, reopened);
      },
    }),
    kind.op({
      name: "cancel",
      method: "post",
      destructive: true,
      path: "/transfers/{transfer_id}/cancel",
      summary: "Stop a running or failed transfer; its open upload at the destination is aborted",
      priceMicro: OP_PRICE,
      params: transferIdParam,
      input: noInput,
      output: transferView,
      errors: [404, 409],
      example: { params: EXAMPLE_ID, after: ["start"] },
      prepare: async (ctx, _config, input) => abortOpen(ctx, cancellable(ctx.sql, input.transfer_id)),
      run: (store, _config, input) => cancel(store, input.transfer_id),
    }),
    kind.op({
      name: "delete_transfer",
      method: "delete",
      path: "/transfers/{transfer_id}",
      summary: "Forget a finished transfer (completed or cancelled)",
      priceMicro: OP_PRICE,
      params: transferIdParam,
      input: noInput,
      output: transferView,
      errors: [404, 409],
      example: { params: EXAMPLE_ID, after: ["start", "cancel"] },
      run: (store, _config, input) => remove(store, input.transfer_id),
    }),
  ],
});
