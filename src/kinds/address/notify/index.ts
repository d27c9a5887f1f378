/**
 * notify: a relay to people (Apprise, ntfy). Channels are URLs in Apprise's grammar (`tgram://…`,
 * `slack://…`, `sendgrid://…`), each parsed by its channel module (./channels) into the request
 * its provider's API expects, kept sealed and shown redacted. A send fans out to every channel
 * as its own delivery of the one pipeline (retries, attempt log, dead letters), sealed whole since
 * URLs and headers carry the credentials; its results are read per channel, or waited for.
 */
import { seal, unseal } from "../../../auth/sealing";
import { noInput } from "../../../openapi/schemas";
import { kindOf } from "../../../kind/kind";
import { registerChannelList } from "./channel-list";
import { relayedMessage } from "./people";
import { AppError } from "../../../http/errors";
import { checkedChannel } from "./channels/read";
import {
  addChannel,
  allSends,
  channelCount,
  channelViews,
  deliveryFinished,
  getSend,
  removeChannel,
  send,
  sendCount,
  sendSettled,
  sendsPage,
  TABLES,
} from "./store";
import {
  addChannelInput,
  channelIdParam,
  channelList,
  channelView,
  MAX_BODY_CHARS,
  MAX_CHANNELS,
  MAX_SENDS,
  notifyCreate,
  notifyInfo,
  sendGetInput,
  sendIdParam,
  sendInput,
  sendsInput,
  sendsPage as sendsPageSchema,
  sendView,
  type NotifyConfig,
} from "./schema";
import { z } from "@hono/zod-openapi";

const OP_PRICE = 100; // µUSD, $0.0001 per call
const SEND_PRICE = 1000; // µUSD, $0.001 per send, whatever the number of channels

const kind = kindOf<NotifyConfig>();

const sendAccepted = z.object({
  send_id: z.string(),
  results: z
    .array(z.object({ channel_id: z.string(), service: z.string(), delivery_id: z.string() }))
    .describe("One delivery per request made; GET …/sends/{send_id} tells how each went."),
});

export const notify = kind.define({
  kind: "notify",
  family: "address",
  title: "Notify people",
  summary:
    `A relay to people through up to ${MAX_CHANNELS} channels given as Apprise-style URLs (Slack, ` +
    `Telegram, Discord, ntfy, Pushover, SMS gateways, e-mail APIs, incident tools: GET ` +
    `/v1/notify/channels); ` +
    "credentials kept encrypted; a send goes to every channel as its own retried delivery, with a result per channel.",
  createSchema: notifyCreate,
  example: { channels: ["ntfys://ntfy.sh/zeitvault-example-topic", "json://example.com/hooks/notify"] },
  migrations: [{ sql: TABLES }],
  dayPriceMicro: 2000,
  defaultTtlSeconds: 30 * 86400,
  maxTtlSeconds: 365 * 86400,
  limits: { max_channels: MAX_CHANNELS, max_body_chars: MAX_BODY_CHARS, max_sends: MAX_SENDS },
  sends: {
    "notify.message":
      "A message to one channel's provider, in the form its API expects (the channel list names each API's reference).",
  },
  routes: registerChannelList,
  // The URLs carry credentials: checked here (422 naming the field), sealed for init, shown redacted in the record.
  sealCreate: async (env, config) => {
    const read = config.channels.map((raw, i) => checkedChannel(env, raw, `channels.${i}`));
    return { config: { channels: read.map((r) => r.shown) }, sealed: config.channels.map((raw) => seal(env, raw)) };
  },
  init: (store, _config, sealed) =>
    (sealed as string[]).forEach((s, i) => void addChannel(store, unseal(store.env, s), `channels.${i}`)),
  usage: (store) => ({ channels: channelCount(store.sql), sends: sendCount(store.sql) }),
  exportData: (store) => ({ channels: channelViews(store.sql), sends: allSends(store) }),
  onDeliveryFinished: (store, _config, deliveryId, outcome) => deliveryFinished(store.sql, deliveryId, outcome),
  // Another kind's alert (people.ts): sent through every channel, once per relay, free (the raising kind pays its own
  // way).
  relay: (store, _config, message, relayId, from) => {
    const parsed = relayedMessage.safeParse(message);
    if (!parsed.success)
      throw new AppError("validation_failed", `A relayed message does not fit: ${parsed.error.message}`);
    if (channelCount(store.sql)) send(store, { ...parsed.data, attach: null }, null, from, `snd_${relayId}`);
  },
  ops: [
    kind.op({
      name: "send",
      method: "post",
      path: "/sends",
      summary: "Send a message to every channel (or the ones named): answers at once with a delivery per channel",
      priceMicro: SEND_PRICE,
      input: sendInput,
      output: sendAccepted,
      errors: [409],
      example: {
        input: {
          title: "Backup finished",
          body: "The **nightly backup** took 42 minutes.",
          format: "markdown",
          priority: "normal",
          tags: ["backup"],
        },
      },
      run: (store, _config, input) => send(store, input, input.channels, "api"),
    }),
    kind.op({
      name: "get_send",
      method: "get",
      path: "/sends/{send_id}",
      summary: "Each channel's result of a send (long-poll with wait_seconds until all are settled)",
      priceMicro: OP_PRICE,
      params: sendIdParam,
      input: sendGetInput,
      output: sendView,
      errors: [404],
      example: { params: { send_id: "snd_0123456789abcdef" }, input: { detail: "true" }, after: ["send"] },
      ready: (store, _config, input) =>
        !store.sql.exec("SELECT 1 FROM notify_sends WHERE send_id = ?", input.send_id).toArray().length ||
        sendSettled(store.sql, input.send_id),
      run: (store, _config, input) => getSend(store, input.send_id, input.detail),
    }),
    kind.op({
      name: "list_sends",
      method: "get",
      path: "/sends",
      summary: "Sends, newest first, with each channel's result",
      priceMicro: OP_PRICE,
      input: sendsInput,
      output: sendsPageSchema,
      example: { input: { limit: 10 } },
      run: (store, _config, input) => sendsPage(store, input.limit, input.cursor),
    }),
    kind.op({
      name: "list_channels",
      method: "get",
      path: "/channels",
      summary: "The channels, credentials masked",
      priceMicro: OP_PRICE,
      input: noInput,
      output: channelList,
      run: (store) => ({ channels: channelViews(store.sql) }),
    }),
    kind.op({
      name: "add_channel",
      method: "post",
      path: "/channels",
      summary: "Add a channel (sends from now on go to it too)",
      priceMicro: OP_PRICE,
      input: addChannelInput,
      output: channelView,
      example: { input: { url: "discord://123456789012345678/example-webhook-token" } },
      prepare: async (ctx, _config, input) => void checkedChannel(ctx.env, input.url, "url"),
      run: (store, _config, input) => {
        const id = addChannel(store, input.url, "url");
        return channelViews(store.sql).find((c) => c.channel_id === id)!;
      },
    }),
    kind.op({
      name: "remove_channel",
      method: "delete",
      path: "/channels/{channel_id}",
      summary: "Remove a channel (deliveries under way finish)",
      priceMicro: OP_PRICE,
      params: channelIdParam,
      input: noInput,
      output: channelList,
      errors: [404],
      example: { params: { channel_id: "ch_0123456789abcdef" }, after: ["add_channel"] },
      run: (store, _config, input) => {
        removeChannel(store.sql, input.channel_id);
        return { channels: channelViews(store.sql) };
      },
    }),
    kind.op({
      name: "info",
      method: "get",
      path: "",
      summary: "Channels, sends, and deliveries by status",
      priceMicro: OP_PRICE,
      input: noInput,
      output: notifyInfo,
      run: (store) => ({
        channels: channelCount(store.sql),
        sends: sendCount(store.sql),
        deliveries: store.deliveries.counts(),
      }),
    }),
  ],
});
