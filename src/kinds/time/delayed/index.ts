/** delayed: a channel to one target; messages posted with a delay or a time are delivered then (QStash publish). */
import { kindOf } from "../../../kind/kind";
import { cancel, exportAll, finished, list, pending, publish, timer } from "./store";
import {
  MAX_PENDING,
  cancelInput,
  channelConfig,
  listInput,
  message,
  messagePage,
  publishInput,
  type ChannelConfig,
} from "./schema";
import { TABLES } from "./store";

const OP_PRICE = 100; // µUSD
const PUBLISH_PRICE = 500; // one outbound call later, retried up to 8 times

const kind = kindOf<ChannelConfig>();

export const delayed = kind.define({
  kind: "delayed",
  family: "time",
  title: "Delayed channel",
  summary:
    "A channel to one target: post messages with delay_seconds or deliver_at and an optional dedup_id; " +
    "list pending, cancel one.",
  targetFields: ["url"],
  createSchema: channelConfig,
  example: { url: "https://example.com/hooks/reminders", method: "POST", headers: { "X-Channel": "reminders" } },
  migrations: [{ sql: TABLES }],
  dayPriceMicro: 500,
  defaultTtlSeconds: 7 * 86400,
  maxTtlSeconds: 366 * 86400,
  limits: { max_pending: MAX_PENDING },
  sends: { "delayed.delivered": "A posted message, to the channel's target at its time." },
  usage: (store) => ({ pending: pending(store) }),
  exportData: (store) => ({ messages: exportAll(store) }),
  timer,
  onDeliveryFinished: (store, _config, deliveryId, outcome) => finished(store, deliveryId, outcome),
  ops: [
    kind.op({
      name: "publish",
      method: "post",
      path: "/messages",
      summary: "Post a message to deliver later",
      priceMicro: PUBLISH_PRICE,
      input: publishInput,
      output: message,
      errors: [413],
      example: {
        input: { body: { event: "trial.ending", user: "u_123" }, delay_seconds: 3600, dedup_id: "trial-ending-u_123" },
      },
      run: (store, _config, input) => publish(store, input),
    }),
    kind.op({
      name: "messages",
      method: "get",
      path: "/messages",
      summary: "List messages (oldest first), optionally by status",
      priceMicro: OP_PRICE,
      input: listInput,
      output: messagePage,
      example: { input: { status: "pending", limit: 20 } },
      run: (store, _config, input) => list(store, input.status, input.limit, input.cursor),
    }),
    kind.op({
      name: "cancel",
      method: "post",
      destructive: true,
      path: "/messages/cancel",
      summary: "Cancel a pending message",
      priceMicro: OP_PRICE,
      input: cancelInput,
      output: message,
      errors: [409],
      example: { input: { message_id: "msg_3f1c9a0b7d2e4c6a8b0d1e2f3a4b5c6d" }, after: ["publish"] },
      run: (store, _config, input) => cancel(store, input.message_id),
    }),
  ],
});
