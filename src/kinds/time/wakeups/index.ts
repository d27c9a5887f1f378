/** wakeups: one HTTP call at a set time, signed, retried, logged (QStash, Temporal timers). */
import { noInput } from "../../../openapi/schemas";
import { kindOf } from "../../../kind/kind";
import { AppError } from "../../../http/errors";
import { finished, fire, fireAt, init, nextDue, reschedule, view } from "./store";
import { rescheduleInput, wakeupConfig, wakeupStatus, type WakeupConfig } from "./schema";
import { TABLES } from "./store";

const OP_PRICE = 100; // µUSD
const FIRE_PRICE = 1000; // an outbound call, retried up to 8 times

/** The call must happen while the resource lives; the 422 names the field that set the time. */
function withinLifetime(at: number, expiresAt: number, when: { at?: string }): void {
  if (at > expiresAt) {
    throw new AppError(
      "validation_failed",
      "The wakeup would fire after the resource expires: extend ttl_seconds or fire earlier.",
      {
        errors: [{ path: when.at === undefined ? "delay_seconds" : "at", message: "is after expires_at" }],
      },
    );
  }
}

const kind = kindOf<WakeupConfig>();

export const wakeups = kind.define({
  kind: "wakeups",
  family: "time",
  title: "Wakeup",
  summary:
    "One HTTP call at a set time (at or delay_seconds), signed with Standard Webhooks, retried, with an attempt log.",
  targetFields: ["url"],
  createSchema: wakeupConfig,
  example: {
    url: "https://example.com/hooks/wakeup",
    method: "POST",
    headers: { "X-Agent-Run": "nightly-42" },
    body: { task: "check-inbox" },
    delay_seconds: 3600,
    label: "resume the crawl",
  },
  migrations: [{ sql: TABLES }],
  dayPriceMicro: 500,
  defaultTtlSeconds: 7 * 86400,
  maxTtlSeconds: 366 * 86400,
  sends: { "wakeup.fired": "The wakeup's configured call, at its time or on fire now." },
  checkCreate: (config, expiresAt, now) => withinLifetime(fireAt(now, config), expiresAt, config),
  init,
  usage: (store) => ({ pending: nextDue(store) !== null }),
  status: (store, config) => view(store, config),
  exportData: (store, config) => view(store, config),
  timer: { nextDue, fire: (store, config) => void fire(store, config) },
  onDeliveryFinished: (store, _config, deliveryId, outcome) => finished(store, deliveryId, outcome),
  ops: [
    kind.op({
      name: "get",
      method: "get",
      path: "",
      summary: "Status of the wakeup",
      priceMicro: OP_PRICE,
      input: noInput,
      output: wakeupStatus,
      run: (store, config) => view(store, config),
    }),
    kind.op({
      name: "fire",
      method: "post",
      path: "/fire",
      summary: "Make the call now",
      priceMicro: FIRE_PRICE,
      input: noInput,
      output: wakeupStatus,
      errors: [409],
      run: (store, config) => fire(store, config),
    }),
    kind.op({
      name: "reschedule",
      method: "post",
      path: "/reschedule",
      summary: "Set a new time (a finished wakeup is armed again)",
      priceMicro: OP_PRICE,
      input: rescheduleInput,
      output: wakeupStatus,
      errors: [409],
      example: { input: { delay_seconds: 7200 } },
      run: (store, config, input) => {
        const at = fireAt(store.now, input);
        withinLifetime(at, store.expiresAt, input);
        return reschedule(store, config, at);
      },
    }),
  ],
});
