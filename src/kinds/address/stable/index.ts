/**
 * stable: a stable address (ngrok static domains, Hookdeck). A permanent public URL forwarding
 * to a target the agent changes with `PUT …/target`: proxied (request and answer streaming both
 * ways) or redirected (307). While there is no target, requests are buffered (bounded) and, once
 * one is set, replayed to it in arrival order, once each, through the delivery pipeline.
 */
import { noInput } from "../../../openapi/schemas";
import { allowsPrivateTargets, checkEgressUrl } from "../../../delivery/egress-guard";
import { kindOf } from "../../../kind/kind";
import { stableFace } from "./public";
import { allBuffered, bufferPage, clearWaiting, info, replayFinished, setTarget, TABLES, targetOf } from "./store";
import {
  bufferInput,
  bufferPage as bufferPageSchema,
  cleared,
  MAX_BODY_BYTES,
  MAX_BUFFERED,
  MAX_BUFFERED_BYTES,
  stableCreate,
  stableInfo,
  targetInput,
  type StableConfig,
} from "./schema";

const OP_PRICE = 100; // µUSD, $0.0001 per call

const kind = kindOf<StableConfig>();

export const stable = kind.define({
  kind: "stable",
  family: "address",
  title: "Stable address",
  summary:
    "A permanent public URL forwarding to a target you change (`PUT …/target`): proxied (streaming both " +
    "ways) or redirected (307); while no target is set, requests are buffered and replayed to the next one " +
    "in order, once each.",
  createSchema: stableCreate,
  example: { target_url: "https://example.com/agent/hooks", mode: "proxy" },
  targetFields: ["target_url"],
  migrations: [{ sql: TABLES }],
  dayPriceMicro: 2000,
  defaultTtlSeconds: 30 * 86400,
  maxTtlSeconds: 365 * 86400,
  limits: { max_body_bytes: MAX_BODY_BYTES, max_buffered: MAX_BUFFERED, max_buffered_bytes: MAX_BUFFERED_BYTES },
  sends: {
    "stable.replay":
      "A request buffered while no target was set, as it came (method, path below the address, query, " +
      "headers, body), to the new target.",
  },
  init: (store, config) => setTarget(store, config),
  usage: (store) => {
    const { proxied, redirected, buffered } = info(store.sql);
    return { proxied, redirected, waiting: buffered.waiting };
  },
  status: (store) => {
    const { target_url, mode } = info(store.sql);
    return { target_url, mode };
  },
  exportData: (store) => ({ ...info(store.sql), buffer: allBuffered(store.sql) }),
  onDeliveryFinished: (store, _config, deliveryId, outcome) => replayFinished(store, deliveryId, outcome),
  public: stableFace,
  ops: [
    kind.op({
      name: "set_target",
      method: "put",
      path: "/target",
      summary: "Point the address at a new target (or none); what is buffered is replayed to it",
      priceMicro: OP_PRICE,
      input: targetInput,
      output: stableInfo,
      example: { input: { target_url: "https://example.com/agent/v2/hooks", mode: "redirect" } },
      prepare: async (ctx, _config, input) =>
        void (
          input.target_url &&
          checkEgressUrl(input.target_url, allowsPrivateTargets(ctx.env.ALLOW_PRIVATE_TARGETS), "target_url")
        ),
      run: (store, _config, input) => {
        const current = targetOf(store.sql);
        setTarget(store, {
          target_url: input.target_url,
          mode: input.mode ?? current.mode,
          forward_path: input.forward_path ?? current.forward_path,
        });
        return info(store.sql);
      },
    }),
    kind.op({
      name: "info",
      method: "get",
      path: "",
      summary: "The target, how many requests passed, and the buffer's counts",
      priceMicro: OP_PRICE,
      input: noInput,
      output: stableInfo,
      run: (store) => info(store.sql),
    }),
    kind.op({
      name: "buffer",
      method: "get",
      path: "/buffer",
      summary: "Requests buffered while there was no target, in arrival order, with their replay's status",
      priceMicro: OP_PRICE,
      input: bufferInput,
      output: bufferPageSchema,
      example: { input: { limit: 10 } },
      run: (store, _config, input) => bufferPage(store.sql, input.status, Number(input.cursor ?? 0), input.limit),
    }),
    kind.op({
      name: "clear_buffer",
      method: "delete",
      path: "/buffer",
      summary: "Drop the requests still waiting for a target",
      priceMicro: OP_PRICE,
      input: noInput,
      output: cleared,
      run: (store) => ({ cleared: clearWaiting(store) }),
    }),
  ],
});
