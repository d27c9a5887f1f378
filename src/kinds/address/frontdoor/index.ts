/**
 * frontdoor: an agent's front door (Pushover emergency receipts, PagerDuty). A public URL where
 * people and other agents leave messages; each is kept, and pushed to the agent's current endpoint
 * (settable, signed with the resource's secret) with retries until it answers 2xx, or pulled and
 * acked when there is no endpoint (or the push gave up). The sender gets a receipt id and a status
 * URL saying whether the message was delivered.
 */
import { noInput } from "../../../openapi/schemas";
import { allowsPrivateTargets, checkEgressUrl } from "../../../delivery/egress-guard";
import { kindOf } from "../../../kind/kind";
import { allRows, TABLES as CAPTURE_TABLES } from "../captures/store";
import { ackInput, ackResult, allItems, MAX_BATCH, pullInfo, pullOps } from "../captures/pull";
import { frontdoorFace } from "./public";
import { ackMessages, endpointOf, pushCounts, pushFinished, setEndpoint, TABLES } from "./store";
import {
  endpoint,
  endpointInput,
  frontdoorCreate,
  frontdoorInfo,
  MAX_BYTES,
  MAX_ITEMS,
  MAX_MESSAGE_BYTES,
  PUSH_INLINE_BYTES,
  type FrontdoorConfig,
} from "./schema";

const OP_PRICE = 100; // µUSD, $0.0001 per call

const kind = kindOf<FrontdoorConfig>();

/** The shared pull; the ack is the front door's own (it stops pushes). */
const [pull] = pullOps(OP_PRICE);

const info = (sql: SqlStorage) => ({ ...pullInfo(sql), endpoint: endpointOf(sql), pushes: pushCounts(sql) });

export const frontdoor = kind.define({
  kind: "frontdoor",
  family: "address",
  title: "Agent front door",
  summary:
    "A public URL where people and agents leave messages (up to 1 MiB) for you: each is pushed to your " +
    "current endpoint (signed, retried until a 2xx) or pulled and acked; the sender gets a receipt and a " +
    "status URL. Receiving is free.",
  createSchema: frontdoorCreate,
  example: { endpoint_url: "https://example.com/agent/inbox", retry_delays: [5, 30, 300], name: "the research agent" },
  targetFields: ["endpoint_url"],
  migrations: [{ sql: [...CAPTURE_TABLES, ...TABLES] }],
  dayPriceMicro: 2000,
  defaultTtlSeconds: 30 * 86400,
  maxTtlSeconds: 365 * 86400,
  limits: {
    max_items: MAX_ITEMS,
    max_bytes: MAX_BYTES,
    max_message_bytes: MAX_MESSAGE_BYTES,
    push_inline_bytes: PUSH_INLINE_BYTES,
    max_batch: MAX_BATCH,
  },
  sends: {
    "frontdoor.message":
      "A message left at the front door: `{ type, receipt_id, seq, received_at, method, path, client_ip, " +
      "content_type, size, sha256, body_text | body_base64 | body_url }`.",
  },
  init: (store, config) => void setEndpoint(store, { url: config.endpoint_url, retry_delays: config.retry_delays }),
  usage: (store) => {
    const { pending, acked, bytes } = pullInfo(store.sql);
    return { pending, acked, bytes };
  },
  exportData: (store) => ({ ...info(store.sql), items: allItems(store, allRows(store.sql)) }),
  onDeliveryFinished: (store, _config, deliveryId, outcome) => pushFinished(store, deliveryId, outcome),
  public: frontdoorFace,
  ops: [
    pull,
    kind.op({
      name: "ack",
      method: "post",
      path: "/items/ack",
      summary:
        `Ack messages by seq (at most ${MAX_BATCH}) or everything through a seq: they leave the pull, and a ` +
        `push still retrying for them stops`,
      priceMicro: OP_PRICE,
      input: ackInput,
      output: ackResult,
      example: { input: { through: 1 } },
      run: (store, _config, input) => ackMessages(store, input),
    }),
    kind.op({
      name: "set_endpoint",
      method: "put",
      path: "/endpoint",
      summary: "Where messages are pushed from now on (null: pull only)",
      priceMicro: OP_PRICE,
      input: endpointInput,
      output: endpoint,
      example: { input: { url: "https://example.com/agent/v2/inbox", retry_delays: null } },
      prepare: async (ctx, _config, input) =>
        void (input.url && checkEgressUrl(input.url, allowsPrivateTargets(ctx.env.ALLOW_PRIVATE_TARGETS), "url")),
      run: (store, _config, input) => setEndpoint(store, { url: input.url, retry_delays: input.retry_delays }),
    }),
    kind.op({
      name: "info",
      method: "get",
      path: "",
      summary: "Counts, the endpoint and how pushes went",
      priceMicro: OP_PRICE,
      input: noInput,
      output: frontdoorInfo,
      run: (store) => info(store.sql),
    }),
  ],
});
