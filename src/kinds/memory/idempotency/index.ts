/**
 * idempotency: a replay firewall for an agent's own side effects (Stripe's
 * idempotency keys, the IETF Idempotency-Key draft). Claim a key with a request
 * fingerprint; the first claim gets `new` and a lock, concurrent ones 409
 * `in_flight`, later ones `duplicate` with the stored result, and another request
 * under the same key 422 `mismatch`. A crashed holder's lock lapses after its
 * timeout, and the next claim with the same fingerprint takes the key over.
 * Keys are forgotten `window_seconds` after their last claim or result.
 */
import { noInput } from "../../../openapi/schemas";
import { kindOf } from "../../../kind/kind";
import { claim, complete, release } from "./claims";
import { exportAll, get, list, remove, timer, usage } from "./store";
import {
  MAX_KEYS,
  MAX_RESULT_BYTES,
  claimInput,
  claimResult,
  completeInput,
  completeResult,
  deleteResult,
  idempotencyConfig,
  keyPage,
  keyParam,
  keyView,
  listInput,
  releaseInput,
  releaseResult,
  type IdempotencyConfig,
  MAX_RESULTS_BYTES,
} from "./schema";
import { TABLES } from "./store";

const OP_PRICE = 100; // µUSD, as a counter's operation

const kind = kindOf<IdempotencyConfig>();

export const idempotency = kind.define({
  kind: "idempotency",
  family: "memory",
  title: "Idempotency keys",
  summary:
    "Replay firewall: claim a key with a request fingerprint → `new` (with a lock token), 409 `in_flight`, " +
    "`duplicate` (with the stored result) or 422 `mismatch`; " +
    `store the result or release the lock; a lapsed lock lets the next identical claim through; keys are ` +
    `forgotten after window_seconds. Up to ${MAX_KEYS} keys, results up to ${MAX_RESULT_BYTES} bytes.`,
  createSchema: idempotencyConfig,
  example: { window_seconds: 86400, lock_timeout_seconds: 300 },
  migrations: [{ sql: TABLES }],
  dayPriceMicro: 1000,
  defaultTtlSeconds: 30 * 86400,
  maxTtlSeconds: 365 * 86400,
  limits: { max_result_bytes: MAX_RESULT_BYTES, max_keys: MAX_KEYS, max_results_bytes: MAX_RESULTS_BYTES },
  usage: (store) => usage(store),
  exportData: (store) => exportAll(store),
  timer,
  ops: [
    // First: the contract fixture's paid call.
    kind.op({
      name: "claim",
      method: "post",
      path: "/claim",
      summary:
        "Claim a key for a request: new (locked for you), duplicate (with the result), or 409 in_flight / " +
        "422 mismatch (not charged)",
      priceMicro: OP_PRICE,
      keys: { at: ["key"] },
      input: claimInput,
      output: claimResult,
      errors: [409],
      example: {
        input: {
          key: "order-7f3e2a91",
          fingerprint: "8f14e45fceea167a5a36dedd4bea2543b7a9f1c2d8e0f3a6b5c4d3e2f1a0b9c8",
          lock_seconds: 120,
        },
      },
      run: (store, config, input) => claim(store, config, input),
    }),
    kind.op({
      name: "complete",
      method: "post",
      path: "/complete",
      summary: "Store the result of a claimed key (needs its lock token); later claims replay it",
      priceMicro: OP_PRICE,
      keys: { at: ["key"] },
      input: completeInput,
      output: completeResult,
      errors: [404, 409, 413],
      example: {
        input: {
          key: "order-7f3e2a91",
          lock_token: "lock_4b2d9e0f1a3c5e7f9b1d3f5a7c9e1b3d",
          result: { status: 201, body: { order_id: "ord_1029" } },
        },
        after: ["claim"],
      },
      run: (store, config, input) => complete(store, config, input),
    }),
    kind.op({
      name: "release",
      method: "post",
      path: "/release",
      summary: "Give up a claimed key without a result (the work failed): the key is forgotten and may be claimed anew",
      priceMicro: OP_PRICE,
      keys: { at: ["key"] },
      input: releaseInput,
      output: releaseResult,
      errors: [404, 409],
      example: {
        input: { key: "order-7f3e2a91", lock_token: "lock_4b2d9e0f1a3c5e7f9b1d3f5a7c9e1b3d" },
        after: ["claim"],
      },
      run: (store, _config, input) => release(store, input),
    }),
    kind.op({
      name: "keys",
      method: "get",
      path: "/keys",
      summary: "List live keys, oldest claim first, optionally by state (results left out)",
      priceMicro: OP_PRICE,
      input: listInput,
      output: keyPage,
      example: { input: { state: "locked", limit: 20 } },
      run: (store, _config, input) => list(store, input.state, input.limit, input.cursor),
    }),
    kind.op({
      name: "get_key",
      method: "get",
      path: "/keys/{key}",
      summary: "A key's state, lock and times, with its result once stored",
      priceMicro: OP_PRICE,
      keys: { at: ["key"] },
      input: noInput,
      params: keyParam,
      output: keyView,
      errors: [404],
      example: { params: { key: "order-7f3e2a91" }, after: ["claim"] },
      run: (store, _config, input) => get(store, input.key),
    }),
    kind.op({
      name: "delete_key",
      method: "delete",
      path: "/keys/{key}",
      summary: "Forget a key now, whatever its state (a holder's lock token stops working)",
      priceMicro: OP_PRICE,
      keys: { at: ["key"] },
      input: noInput,
      params: keyParam,
      output: deleteResult,
      errors: [404],
      example: { params: { key: "order-7f3e2a91" }, after: ["claim"] },
      run: (store, _config, input) => remove(store, input.key),
    }),
  ],
});
