/**
 * fanout: one public URL, many destinations (QStash URL groups, Hookdeck connections). Each request
 * to the address goes to every destination whose filter it passes (field equality or a JSONata
 * predicate), as its own delivery through the one pipeline: signed, retried on the destination's
 * schedule, logged. Destinations are added and removed while the fanout is live; each has its
 * statistics and its sends with their attempts.
 */
import { noInput } from "../../../openapi/schemas";
import { kindOf } from "../../../kind/kind";
import { checkExpression } from "../../../expressions/jsonata";
import { allowsPrivateTargets, checkEgressUrl } from "../../../delivery/egress-guard";
import { fanoutFace } from "./public";
import {
  activeDestinations,
  addDestination,
  destinationViews,
  finishSend,
  findDestination,
  messageCount,
  removeDestination,
  sendsOf,
  TABLES,
} from "./store";
import {
  destination,
  destinationIdParam,
  destinationInput,
  destinationList,
  fanoutCreate,
  fanoutInfo,
  MAX_DESTINATIONS,
  MAX_FILTERED_BYTES,
  MAX_MESSAGE_BYTES,
  MAX_MESSAGES,
  sendsInput,
  sendsPage,
  type DestinationInput,
  type FanoutConfig,
} from "./schema";
import type { Env } from "../../../env";

const OP_PRICE = 100; // µUSD, $0.0001 per call

const kind = kindOf<FanoutConfig>();

/** A destination's URL and filter, checked where they arrive (422 naming the field). */
function checkDestination(env: Env, d: DestinationInput, field: string): void {
  checkEgressUrl(d.url, allowsPrivateTargets(env.ALLOW_PRIVATE_TARGETS), `${field}.url`);
  if (d.filter?.jsonata !== undefined) checkExpression(d.filter.jsonata, `${field}.filter.jsonata`);
}

export const fanout = kind.define({
  kind: "fanout",
  family: "address",
  title: "Webhook fan-out",
  summary:
    `One public URL, up to ${MAX_DESTINATIONS} destinations: each request goes to every destination whose ` +
    `filter (field equality or JSONata) it passes, ` +
    "as its own signed, retried delivery; per-destination statistics; destinations added and removed while live.",
  createSchema: fanoutCreate,
  example: {
    destinations: [
      { url: "https://example.com/hooks/billing", filter: { equals: { type: "invoice.paid" } } },
      { url: "https://example.com/hooks/audit", headers: { "x-source": "fanout" } },
    ],
  },
  migrations: [{ sql: TABLES }],
  dayPriceMicro: 5000,
  defaultTtlSeconds: 30 * 86400,
  maxTtlSeconds: 365 * 86400,
  limits: {
    max_destinations: MAX_DESTINATIONS,
    max_message_bytes: MAX_MESSAGE_BYTES,
    max_filtered_bytes: MAX_FILTERED_BYTES,
    max_messages: MAX_MESSAGES,
  },
  sends: {
    "fanout.message":
      "A request to the fanout's address, passed on: its method, its headers (but our edge's and " +
      "webhook-*), its exact body, plus the destination's headers.",
  },
  sealCreate: async (env, config) => {
    config.destinations.forEach((d, i) => checkDestination(env, d, `destinations.${i}`));
    return { config, sealed: null };
  },
  init: (store, config) => config.destinations.forEach((d) => void addDestination(store, d)),
  usage: (store) => ({ ...messageCount(store.sql), destinations: activeDestinations(store.sql).length }),
  exportData: (store) => ({ ...messageCount(store.sql), destinations: destinationViews(store.sql) }),
  onDeliveryFinished: (store, _config, deliveryId, outcome) => finishSend(store, deliveryId, outcome),
  public: fanoutFace,
  ops: [
    kind.op({
      name: "list_destinations",
      method: "get",
      path: "/destinations",
      summary: "Destinations (removed ones too) with their statistics",
      priceMicro: OP_PRICE,
      input: noInput,
      output: destinationList,
      run: (store) => ({ destinations: destinationViews(store.sql) }),
    }),
    kind.op({
      name: "add_destination",
      method: "post",
      path: "/destinations",
      summary: "Add a destination: messages from now on go to it too",
      priceMicro: OP_PRICE,
      input: destinationInput,
      output: destination,
      errors: [409],
      example: {
        input: {
          url: "https://example.com/hooks/new",
          filter: { jsonata: "amount > 100" },
          retry_delays: [10, 60, 600],
        },
      },
      prepare: async (ctx, _config, input) => checkDestination(ctx.env, input, "destination"),
      run: (store, _config, input) => {
        const id = addDestination(store, input);
        return destinationViews(store.sql).find((d) => d.destination_id === id)!;
      },
    }),
    kind.op({
      name: "remove_destination",
      method: "delete",
      path: "/destinations/{destination_id}",
      summary: "Remove a destination: nothing new goes to it (deliveries under way finish)",
      priceMicro: OP_PRICE,
      params: destinationIdParam,
      input: noInput,
      output: destination,
      errors: [404],
      example: { params: { destination_id: "dst_0123456789abcdef" }, after: ["add_destination"] },
      run: (store, _config, input) => {
        removeDestination(store, input.destination_id);
        return destinationViews(store.sql).find((d) => d.destination_id === input.destination_id)!;
      },
    }),
    kind.op({
      name: "destination_sends",
      method: "get",
      path: "/destinations/{destination_id}/sends",
      summary: "What became of each message at a destination, with the delivery's attempts",
      priceMicro: OP_PRICE,
      params: destinationIdParam,
      input: sendsInput,
      output: sendsPage,
      errors: [404],
      example: { params: { destination_id: "dst_0123456789abcdef" }, input: { limit: 10 }, after: ["add_destination"] },
      run: (store, _config, input) => {
        findDestination(store.sql, input.destination_id);
        return sendsOf(store, input.destination_id, Number(input.cursor ?? 0), input.limit);
      },
    }),
    kind.op({
      name: "info",
      method: "get",
      path: "",
      summary: "Messages taken and active destinations",
      priceMicro: OP_PRICE,
      input: noInput,
      output: fanoutInfo,
      run: (store) => ({ ...messageCount(store.sql), destinations: activeDestinations(store.sql).length }),
    }),
  ],
});
