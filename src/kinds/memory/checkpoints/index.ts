/**
 * checkpoints: a crash checkpoint store (LangGraph's checkpointer, Temporal's
 * event history). An agent saves its state (JSON or bytes) to a thread after
 * each step, with a per-thread monotonic seq and optional expected_seq (so two
 * writers of one thread cannot both win), reads the latest after a crash, and
 * forks by saving with a parent_id from another thread or an older checkpoint.
 * keep_last bounds each thread's history.
 */
import { noInput } from "../../../openapi/schemas";
import { kindOf } from "../../../kind/kind";
import { deleteThread, exportAll, history, save, threads, usage, withValue } from "./store";
import { discardSave, prepareSave, readById, readLatest } from "./values";
import {
  INLINE_MAX_BYTES,
  MAX_CHECKPOINTS,
  MAX_VALUE_BYTES,
  SAVE_BODY_BYTES,
  checkpoint,
  checkpointInfo,
  checkpointParam,
  checkpointsConfig,
  getInput,
  historyInput,
  historyPage,
  latestInput,
  saveInput,
  threadDeleted,
  threadPage,
  threadParam,
  threadsInput,
  type CheckpointsConfig,
  MAX_STORED_BYTES,
} from "./schema";
import { TABLES } from "./store";

const OP_PRICE = 100; // µUSD, as a counter's operation
/** A save may write up to 4 MiB to R2 and keeps it for the resource's life. */
const SAVE_PRICE = 200;

const kind = kindOf<CheckpointsConfig>();

export const checkpoints = kind.define({
  kind: "checkpoints",
  family: "memory",
  title: "Checkpoints",
  summary:
    "Crash checkpoint store: save JSON or bytes to a thread with a monotonic seq and optional expected_seq " +
    "(409 on a lost race); read the latest, one by id, " +
    `or the history; keep_last per thread; parent_id forks into another thread. Checkpoints up to ` +
    `${MAX_VALUE_BYTES} bytes (over ${INLINE_MAX_BYTES} kept in R2), ` +
    `${MAX_CHECKPOINTS} per resource.`,
  createSchema: checkpointsConfig,
  example: { keep_last: 10, label: "research agent state" },
  migrations: [{ sql: TABLES }],
  dayPriceMicro: 2000,
  defaultTtlSeconds: 30 * 86400,
  maxTtlSeconds: 365 * 86400,
  limits: {
    max_value_bytes: MAX_VALUE_BYTES,
    inline_max_bytes: INLINE_MAX_BYTES,
    max_checkpoints: MAX_CHECKPOINTS,
    max_stored_bytes: MAX_STORED_BYTES,
  },
  usage: (store) => usage(store),
  exportData: (store) => exportAll(store),
  ops: [
    // First: the contract fixture's paid call.
    kind.op({
      name: "save",
      method: "post",
      path: "/checkpoints",
      summary:
        "Save a checkpoint to a thread (seq = latest + 1); 409 with current_seq when expected_seq does not match",
      priceMicro: SAVE_PRICE,
      keys: { at: ["thread"] },
      input: saveInput,
      output: checkpointInfo,
      errors: [409, 413],
      maxBodyBytes: SAVE_BODY_BYTES,
      example: {
        input: {
          thread: "run-2026-11-24",
          value: { step: 12, plan: ["fetch", "summarise"], cursor: "page-3" },
          expected_seq: 0,
          label: "after fetching",
          step: 12,
          tags: ["nightly"],
        },
      },
      prepare: (ctx, _config, input) => prepareSave(ctx, input),
      run: (store, config, input, prepared) => save(store, config, input, prepared),
      discard: (ctx, prepared) => discardSave(ctx, prepared),
    }),
    kind.op({
      name: "latest",
      method: "get",
      path: "/latest",
      summary: "The latest checkpoint of a thread, with its value",
      priceMicro: OP_PRICE,
      keys: { at: ["thread"] },
      input: latestInput,
      output: checkpoint,
      errors: [404],
      example: { input: { thread: "run-2026-11-24" }, after: ["save"] },
      prepare: (ctx, _config, input) => readLatest(ctx, input.thread, input.include_value),
      run: (store, _config, _input, read) => withValue(store, read),
    }),
    kind.op({
      name: "get",
      method: "get",
      path: "/checkpoints/{checkpoint_id}",
      summary: "One checkpoint by id, with its value",
      priceMicro: OP_PRICE,
      input: getInput,
      params: checkpointParam,
      output: checkpoint,
      errors: [404],
      example: {
        params: { checkpoint_id: "cp_0f1e2d3c4b5a69788796a5b4c3d2e1f0" },
        input: { include_value: "true" },
        after: ["save"],
      },
      prepare: (ctx, _config, input) => readById(ctx, input.checkpoint_id, input.include_value),
      run: (store, _config, _input, read) => withValue(store, read),
    }),
    kind.op({
      name: "history",
      method: "get",
      path: "/history",
      summary: "A thread's checkpoints, newest first (metadata; read one by id for its value)",
      priceMicro: OP_PRICE,
      keys: { at: ["thread"] },
      input: historyInput,
      output: historyPage,
      errors: [404],
      example: { input: { thread: "run-2026-11-24", limit: 20 }, after: ["save"] },
      run: (store, _config, input) => history(store, input.thread, input.limit, input.cursor),
    }),
    kind.op({
      name: "threads",
      method: "get",
      path: "/threads",
      summary: "The threads, oldest first, with their latest seq and where they forked from",
      priceMicro: OP_PRICE,
      input: threadsInput,
      output: threadPage,
      example: { input: { limit: 20 } },
      run: (store, _config, input) => threads(store, input.limit, input.cursor),
    }),
    kind.op({
      name: "delete_thread",
      method: "delete",
      path: "/threads/{thread}",
      summary: "Delete a thread and all its checkpoints (its name may be reused, from seq 1)",
      priceMicro: OP_PRICE,
      keys: { at: ["thread"] },
      input: noInput,
      params: threadParam,
      output: threadDeleted,
      errors: [404],
      example: { params: { thread: "run-2026-11-24" }, after: ["save"] },
      run: (store, _config, input) => deleteThread(store, input.thread),
    }),
  ],
});
