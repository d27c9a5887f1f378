/**
 * deliveries: guaranteed outbound delivery (Svix, Convoy). The agent submits a request (URL,
 * method, headers, a body up to 10 MiB) and the service's one delivery pipeline makes it: signed
 * with the resource's secret (Standard Webhooks), retried until a 2xx on the default schedule or
 * the request's own, dead after the last retry (the dead letters: `?status=dead`), sent again by
 * hand through the attempt log's retry, each attempt logged. An idempotency key makes a submission
 * happen once however often it is repeated.
 */
import { noInput } from "../../../openapi/schemas";
import { AppError } from "../../../http/errors";
import { kindOf } from "../../../kind/kind";
import { delivery, deliveryPage } from "../../../delivery/schemas";
import { MAX_ATTEMPTS, MAX_RETRY_DELAY_SECONDS, RETRY_DELAYS_SECONDS } from "../../../delivery/schedule";
import { discard, prepare, submit, TABLES } from "./store";
import {
  deliveriesCreate,
  deliveriesInfo,
  deliveryIdParam,
  type DeliveriesConfig,
  listInput,
  MAX_BODY_BYTES,
  MAX_KEYS,
  MAX_SUBMIT_BYTES,
  STATUSES,
  submitInput,
  submitResult,
} from "./schema";

const kind = kindOf<DeliveriesConfig>();

const schedule = (config: DeliveriesConfig) => config.retry_delays ?? [...RETRY_DELAYS_SECONDS];

const counts = (store: { deliveries: { counts(): Record<string, number> } }) => {
  const have = store.deliveries.counts();
  return Object.fromEntries(STATUSES.map((s) => [s, have[s] ?? 0])) as Record<(typeof STATUSES)[number], number>;
};

export const deliveries = kind.define({
  kind: "deliveries",
  family: "address",
  title: "Guaranteed outbound delivery",
  summary:
    "Submit an HTTP request (body up to 10 MiB): delivered signed, retried until a 2xx on the service's or " +
    "your schedule, dead letters listed and retried by hand, every attempt logged; an idempotency key " +
    "sends once.",
  createSchema: deliveriesCreate,
  example: { retry_delays: [10, 60, 600, 3600] },
  migrations: [{ sql: TABLES }],
  dayPriceMicro: 1000,
  defaultTtlSeconds: 7 * 86400,
  maxTtlSeconds: 90 * 86400,
  limits: {
    max_body_bytes: MAX_BODY_BYTES,
    max_retries: MAX_ATTEMPTS - 1,
    max_retry_delay_seconds: MAX_RETRY_DELAY_SECONDS,
    max_idempotency_keys: MAX_KEYS,
  },
  sends: {
    "delivery.request":
      "A submitted request, as it was given (method, headers, body), with the Standard Webhooks signature " +
      "headers added.",
  },
  usage: (store) => counts(store),
  exportData: (store, config) => ({ counts: counts(store), retry_delays: schedule(config) }),
  ops: [
    kind.op({
      name: "submit",
      method: "post",
      path: "/requests",
      summary: "Submit a request to be delivered (answers at once; the delivery runs on)",
      priceMicro: 1000,
      input: submitInput,
      output: submitResult,
      maxBodyBytes: MAX_SUBMIT_BYTES,
      errors: [409, 413],
      example: {
        input: {
          url: "https://example.com/hooks/orders",
          method: "POST",
          headers: { "x-order": "1042" },
          body: { order: 1042, status: "paid" },
          idempotency_key: "order-1042-paid",
        },
      },
      prepare: (ctx, _config, input) => prepare(ctx, input),
      run: (store, config, input, prepared) =>
        submit(store, input, prepared, input.retry_delays ?? config.retry_delays ?? undefined),
      discard,
    }),
    kind.op({
      name: "get_delivery",
      method: "get",
      path: "/requests/{delivery_id}",
      summary: "A submitted request's state and attempts",
      priceMicro: 100,
      params: deliveryIdParam,
      input: noInput,
      output: delivery,
      errors: [404],
      example: { params: { delivery_id: "evt_8d1f0c6a2b3e4f5a6b7c8d9e0f1a2b3c" }, after: ["submit"] },
      run: (store, _config, input) => {
        const found = store.deliveries.get(input.delivery_id);
        if (!found) throw new AppError("not_found", `No delivery ${input.delivery_id} on this resource.`);
        return found as never;
      },
    }),
    kind.op({
      name: "list",
      method: "get",
      path: "/requests",
      summary: "Submitted requests, oldest first, by state (`dead`: the dead letters)",
      priceMicro: 100,
      input: listInput,
      output: deliveryPage,
      example: { input: { status: "dead", limit: 10 } },
      run: (store, _config, input) =>
        store.deliveries.page(input.status ? [input.status] : [], input.limit, input.cursor ?? null) as never,
    }),
    kind.op({
      name: "info",
      method: "get",
      path: "",
      summary: "Deliveries by state, and the default retry schedule",
      priceMicro: 100,
      input: noInput,
      output: deliveriesInfo,
      run: (store, config) => ({ counts: counts(store), retry_delays: schedule(config) }),
    }),
  ],
});
