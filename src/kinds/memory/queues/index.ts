/**
 * queues: a work queue with leases (SQS, Cloudflare Queues, beanstalkd): push with
 * delay, dedup id and priority; lease N with a visibility timeout; ack, nack with
 * delay, extend; dead letters after max_receive_count, listable and redrivable;
 * long-poll leases; stats. The kind's timer promotes delayed messages and lapsed
 * leases when they come due, which also wakes waiting long-polls.
 */
import { noInput } from "../../../openapi/schemas";
import { kindOf } from "../../../kind/kind";
import { ack, ackMany, anyVisible, extend, lease, nack } from "./leases";
import { deadLetters, exportAll, get, push, redrive, remove, stats } from "./messages";
import { counts, init, nextVisibleAt, promote, total } from "./store";
import {
  MAX_BATCH,
  MAX_MESSAGE_BYTES,
  MAX_MESSAGES,
  MAX_QUEUE_BYTES,
  ackBatchInput,
  ackBatchResult,
  acked,
  batchInput,
  batchResult,
  deadListInput,
  deleted,
  extendInput,
  extended,
  leaseInput,
  leaseParam,
  leaseResult,
  message,
  messagePage,
  messageParam,
  nackInput,
  nacked,
  pushInput,
  pushed,
  queueConfig,
  queueStats,
  redriveInput,
  redriveResult,
  type QueueConfig,
  MAX_VISIBILITY_SECONDS,
  MAX_DELAY_SECONDS,
} from "./schema";
import { TABLES } from "./store";

const OP_PRICE = 100; // µUSD, $0.0001 per call
/** A full batch at 10 µUSD per message: from 10 messages on, cheaper than one call each. */
const BATCH_PRICE = 1000;

const kind = kindOf<QueueConfig>();

export const queues = kind.define({
  kind: "queues",
  family: "memory",
  title: "Queue",
  summary:
    "Work queue with leases: push (delay, dedup id, priority); lease N with visibility_seconds and " +
    "long-poll; ack, nack with delay, extend; " +
    `dead letters after max_receive_count, listable and redrivable; stats. Up to ${MAX_MESSAGES}` +
    ` messages of at most ${MAX_MESSAGE_BYTES} bytes, ${MAX_QUEUE_BYTES} bytes of bodies and dedup ids in ` +
    `all.`,
  createSchema: queueConfig,
  example: { visibility_seconds: 60, max_receive_count: 3, dedup_window_seconds: 600 },
  migrations: [{ sql: TABLES }],
  dayPriceMicro: 1000,
  defaultTtlSeconds: 30 * 86400,
  maxTtlSeconds: 366 * 86400,
  limits: {
    max_messages: MAX_MESSAGES,
    max_bytes: MAX_QUEUE_BYTES,
    max_message_bytes: MAX_MESSAGE_BYTES,
    max_batch: MAX_BATCH,
    max_visibility_seconds: MAX_VISIBILITY_SECONDS,
    max_delay_seconds: MAX_DELAY_SECONDS,
  },
  init,
  usage: (store) => {
    const c = counts(store.sql);
    return { messages: total(c), dead: c.dead, bytes: c.bytes };
  },
  exportData: (store, config) => exportAll(store, config),
  timer: {
    nextDue: (store) => nextVisibleAt(store.sql),
    // A large burst is promoted in slices: while some remain due, the alarm fires again at once.
    fire: (store, config) => promote(store, config, 5000),
  },
  ops: [
    // First of the /messages ops: the contract fixture's paid call.
    kind.op({
      name: "push",
      method: "post",
      path: "/messages",
      summary: "Push one message (delay, dedup id, priority)",
      priceMicro: OP_PRICE,
      input: pushInput,
      output: pushed,
      errors: [413],
      example: { input: { body: { job: "resize", image: "img_204.png" }, priority: 5, dedup_id: "resize-img_204" } },
      run: (store, config, input) => push(store, config, [input], () => "body").items[0]!,
    }),
    kind.op({
      name: "push_batch",
      method: "post",
      path: "/messages/batch",
      summary: `Push up to ${MAX_BATCH} messages, all or none (one price for the batch)`,
      priceMicro: BATCH_PRICE,
      input: batchInput,
      output: batchResult,
      errors: [413],
      example: {
        input: {
          messages: [
            { body: { job: "resize", image: "img_205.png" } },
            { body: { job: "resize", image: "img_206.png" }, delay_seconds: 60 },
          ],
        },
      },
      run: (store, config, input) => push(store, config, input.messages, (i) => `messages.${i}.body`),
    }),
    kind.op({
      name: "lease",
      method: "post",
      path: "/leases",
      summary: "Lease up to max_messages visible messages, long-polling up to wait_seconds",
      priceMicro: OP_PRICE,
      input: leaseInput,
      output: leaseResult,
      example: { input: { max_messages: 10, visibility_seconds: 120, wait_seconds: 20 }, after: ["push"] },
      ready: (store) => anyVisible(store),
      run: (store, config, input) => lease(store, config, input),
    }),
    kind.op({
      name: "ack_batch",
      method: "post",
      destructive: true,
      path: "/leases/ack",
      summary: `Ack up to ${MAX_BATCH} leases (those no longer held are listed as lost)`,
      priceMicro: BATCH_PRICE,
      input: ackBatchInput,
      output: ackBatchResult,
      example: { input: { lease_ids: ["lease_1a2b3c4d5e6f708192a3b4c5d6e7f809"] }, after: ["push", "lease"] },
      run: (store, _config, input) => ackMany(store, input.lease_ids),
    }),
    kind.op({
      name: "ack",
      method: "post",
      destructive: true,
      path: "/leases/{lease_id}/ack",
      summary: "Ack a lease: the message is done and deleted",
      priceMicro: OP_PRICE,
      params: leaseParam,
      input: noInput,
      output: acked,
      errors: [409],
      example: { params: { lease_id: "lease_1a2b3c4d5e6f708192a3b4c5d6e7f809" }, after: ["push", "lease"] },
      run: (store, _config, input) => ack(store, input.lease_id),
    }),
    kind.op({
      name: "nack",
      method: "post",
      path: "/leases/{lease_id}/nack",
      summary: "Give a leased message back, visible now or after delay_seconds (or dead)",
      priceMicro: OP_PRICE,
      params: leaseParam,
      input: nackInput,
      output: nacked,
      errors: [409],
      example: {
        params: { lease_id: "lease_1a2b3c4d5e6f708192a3b4c5d6e7f809" },
        input: { delay_seconds: 30 },
        after: ["push", "lease"],
      },
      run: (store, config, input) => nack(store, config, input.lease_id, input.delay_seconds),
    }),
    kind.op({
      name: "extend",
      method: "post",
      path: "/leases/{lease_id}/extend",
      summary: "Keep a leased message hidden for visibility_seconds from now",
      priceMicro: OP_PRICE,
      params: leaseParam,
      input: extendInput,
      output: extended,
      errors: [409],
      example: {
        params: { lease_id: "lease_1a2b3c4d5e6f708192a3b4c5d6e7f809" },
        input: { visibility_seconds: 300 },
        after: ["push", "lease"],
      },
      run: (store, _config, input) => extend(store, input.lease_id, input.visibility_seconds),
    }),
    kind.op({
      name: "stats",
      method: "get",
      path: "/stats",
      summary: "Counts by state, bytes, age of the oldest message, next visibility change",
      priceMicro: OP_PRICE,
      input: noInput,
      output: queueStats,
      run: (store, config) => stats(store, config),
    }),
    kind.op({
      name: "message",
      method: "get",
      path: "/messages/{message_id}",
      summary: "One message, its state and body",
      priceMicro: OP_PRICE,
      params: messageParam,
      input: noInput,
      output: message,
      errors: [404],
      example: { params: { message_id: "msg_9a8b7c6d5e4f30211203f4e5d6c7b8a9" }, after: ["push"] },
      run: (store, config, input) => get(store, config, input.message_id),
    }),
    kind.op({
      name: "delete",
      method: "delete",
      path: "/messages/{message_id}",
      summary: "Delete a message in any state (its lease, if any, ends)",
      priceMicro: OP_PRICE,
      params: messageParam,
      input: noInput,
      output: deleted,
      errors: [404],
      example: { params: { message_id: "msg_9a8b7c6d5e4f30211203f4e5d6c7b8a9" }, after: ["push"] },
      run: (store, _config, input) => remove(store, input.message_id),
    }),
    kind.op({
      name: "dead_letters",
      method: "get",
      path: "/dead",
      summary: "Dead letters, oldest first",
      priceMicro: OP_PRICE,
      input: deadListInput,
      output: messagePage,
      example: { input: { limit: 20 } },
      run: (store, config, input) => deadLetters(store, config, input.limit, input.cursor),
    }),
    kind.op({
      name: "redrive",
      method: "post",
      path: "/dead/redrive",
      summary: "Make dead letters visible again (by id, or all)",
      priceMicro: OP_PRICE,
      input: redriveInput,
      output: redriveResult,
      example: { input: { all: true } },
      run: (store, config, input) => redrive(store, config, input),
    }),
  ],
});
