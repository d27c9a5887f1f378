/**
 * drips: a queue released to one target at a rate (sliding window) with bounded
 * parallelism; pause, resume, release now, backlog listing (QStash flow control,
 * Inngest throttle). Each message is paid when enqueued; its release, retries
 * and attempt log are covered by that price.
 */
import { noInput } from "../../../openapi/schemas";
import { kindOf } from "../../../kind/kind";
import { byId, cancel, detail, exportAll, finished, init, list, purge } from "./store/messages";
import { enqueue } from "./store/enqueue";
import { releaseNow, setLimits, setPaused, statusView, timer, usage } from "./store/flow";
import {
  MAX_BATCH,
  batchInput,
  batchResult,
  dripConfig,
  dripStatus,
  enqueueInput,
  limitsInput,
  listInput,
  message,
  messageDetail,
  messageInput,
  messagePage,
  purgeResult,
  releaseInput,
  releaseResult,
  type DripConfig,
  MAX_BACKLOG,
  MAX_BACKLOG_BYTES,
  MAX_PARALLEL,
} from "./schema";
import { TABLES } from "./store/messages";

const OP_PRICE = 100; // µUSD
/** One outbound call later, retried up to 8 times (as a delayed message). */
const ENQUEUE_PRICE = 500;
/** A full batch at 200 per message; from 40 messages on it costs less than enqueueing them one by one. */
const BATCH_PRICE = 20_000;

const kind = kindOf<DripConfig>();

export const drips = kind.define({
  kind: "drips",
  family: "time",
  title: "Drip queue",
  summary:
    "Enqueue many messages; they are released to one target at `rate` (count per period, sliding window) " +
    "with at most max_parallel in flight; pause, resume, release now, backlog listing.",
  targetFields: ["url"],
  createSchema: dripConfig,
  example: { url: "https://example.com/hooks/send-email", rate: { count: 10, period_seconds: 60 }, max_parallel: 2 },
  migrations: [{ sql: TABLES }],
  dayPriceMicro: 500,
  defaultTtlSeconds: 7 * 86400,
  maxTtlSeconds: 366 * 86400,
  limits: {
    max_batch: MAX_BATCH,
    max_backlog: MAX_BACKLOG,
    max_backlog_bytes: MAX_BACKLOG_BYTES,
    max_parallel: MAX_PARALLEL,
  },
  sends: { "drip.released": "A queued message, to the drip's target when the rate and max_parallel let it go." },
  init,
  usage: (store) => usage(store),
  status: (store) => statusView(store),
  exportData: (store) => ({ status: statusView(store), messages: exportAll(store) }),
  timer,
  onDeliveryFinished: (store, _config, deliveryId, outcome) => finished(store, deliveryId, outcome),
  ops: [
    // First of the /messages ops: the contract fixture's paid call.
    kind.op({
      name: "enqueue",
      method: "post",
      path: "/messages",
      summary: "Queue one message",
      priceMicro: ENQUEUE_PRICE,
      input: enqueueInput,
      output: message,
      errors: [413],
      example: { input: { body: { email: "ada@example.com", template: "welcome" }, dedup_id: "welcome-ada" } },
      run: (store, config, input) => enqueue(store, config, [input]).items[0]!,
    }),
    kind.op({
      name: "enqueue_batch",
      method: "post",
      path: "/messages/batch",
      summary: `Queue up to ${MAX_BATCH} messages in order, all or none (one price for the batch)`,
      priceMicro: BATCH_PRICE,
      input: batchInput,
      output: batchResult,
      errors: [413],
      example: {
        input: { messages: [{ body: { email: "ada@example.com" } }, { body: { email: "alan@example.com" } }] },
      },
      run: (store, config, input) => enqueue(store, config, input.messages),
    }),
    kind.op({
      name: "messages",
      method: "get",
      path: "/messages",
      summary: "The backlog and history, oldest first, optionally by status",
      priceMicro: OP_PRICE,
      input: listInput,
      output: messagePage,
      example: { input: { status: "pending", limit: 20 } },
      run: (store, _config, input) => list(store, input.status, input.limit, input.cursor),
    }),
    kind.op({
      name: "message",
      method: "get",
      path: "/message",
      summary: "One message, with its body and headers",
      priceMicro: OP_PRICE,
      input: messageInput,
      output: messageDetail,
      errors: [404],
      example: { input: { message_id: "msg_3f1c9a0b7d2e4c6a8b0d1e2f3a4b5c6d" }, after: ["enqueue"] },
      run: (store, _config, input) => detail(byId(store, input.message_id)),
    }),
    kind.op({
      name: "cancel",
      method: "post",
      destructive: true,
      path: "/messages/cancel",
      summary: "Cancel a pending message",
      priceMicro: OP_PRICE,
      input: messageInput,
      output: message,
      errors: [404, 409],
      example: { input: { message_id: "msg_3f1c9a0b7d2e4c6a8b0d1e2f3a4b5c6d" }, after: ["pause", "enqueue"] },
      run: (store, _config, input) => cancel(store, input.message_id),
    }),
    kind.op({
      name: "purge",
      method: "post",
      destructive: true,
      path: "/messages/purge",
      summary: "Cancel every pending message",
      priceMicro: OP_PRICE,
      input: noInput,
      output: purgeResult,
      run: (store) => purge(store),
    }),
    kind.op({
      name: "get",
      method: "get",
      path: "",
      summary: "Pause, counts, the pace in force and the next release",
      priceMicro: OP_PRICE,
      input: noInput,
      output: dripStatus,
      run: (store) => statusView(store),
    }),
    kind.op({
      name: "pause",
      method: "post",
      path: "/pause",
      summary: "Stop releasing (deliveries in flight go on)",
      priceMicro: OP_PRICE,
      input: noInput,
      output: dripStatus,
      run: (store) => setPaused(store, true),
    }),
    kind.op({
      name: "resume",
      method: "post",
      path: "/resume",
      summary: "Release again, at the rate",
      priceMicro: OP_PRICE,
      input: noInput,
      output: dripStatus,
      run: (store) => setPaused(store, false),
    }),
    kind.op({
      name: "release",
      method: "post",
      path: "/release",
      summary: "Release now the oldest pending messages (or one by id), past pause, rate and max_parallel",
      priceMicro: OP_PRICE,
      input: releaseInput,
      output: releaseResult,
      errors: [404, 409],
      example: { input: { count: 1 }, after: ["pause", "enqueue"] },
      run: (store, config, input) => releaseNow(store, config, input),
    }),
    kind.op({
      name: "set_limits",
      method: "post",
      path: "/limits",
      summary: "Change the rate or max_parallel in force",
      priceMicro: OP_PRICE,
      input: limitsInput,
      output: dripStatus,
      example: { input: { rate: { count: 5, period_seconds: 60 }, max_parallel: 2 } },
      run: (store, _config, input) => setLimits(store, input),
    }),
  ],
});
