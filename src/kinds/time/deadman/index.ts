/**
 * deadman: a dead-man switch (healthchecks.io, Cronitor). A job pings the public
 * address (free) or the ping operation every period; when pings stop, or failures
 * pile up, the switch goes down, alerts, repeats the alert, and releases an optional
 * sealed payload to a successor. The next success brings it back up, with a recovery event.
 */
import { noInput } from "../../../openapi/schemas";
import { kindOf } from "../../../kind/kind";
import { allPings, listPings } from "./store/pings";
import {
  clearPayload,
  initPayload,
  releaseDue,
  releasePayload,
  sealPayload,
  storePayload,
  unsealForRelease,
} from "./store/payload";
import { derive, initSwitch, pause, ping, readSwitch, realert, settle, statusView, switchDue } from "./store/switch";
import { pingFace } from "./public";
import {
  MAX_PERIOD_SECONDS,
  MAX_PINGS_KEPT,
  MAX_PAYLOAD_BYTES,
  deadmanConfig,
  deadmanStatus,
  payloadInput,
  payloadState,
  pingInput,
  pingPage,
  pingsInput,
  type DeadmanConfig,
} from "./schema";
import { isoOrNull } from "../../../time";
import { checkNotifyTarget } from "../../address/notify/people";
import { TABLES as SWITCH_TABLES } from "./store/switch";
import { TABLES as PINGS_TABLES } from "./store/pings";
import { TABLES as PAYLOAD_TABLES } from "./store/payload";

const OP_PRICE = 100; // µUSD
/** Sealing now, and one outbound request (retried) when it is released. */
const PAYLOAD_PRICE = 1000;

const kind = kindOf<DeadmanConfig>();

export const deadman = kind.define({
  kind: "deadman",
  family: "time",
  title: "Dead-man switch",
  summary:
    "A job pings a public URL (/start, /fail, /{exit_code}) every period_seconds; past grace_seconds a run " +
    "is missed, and after alert_after_misses the switch goes down: alert (repeated every realert_seconds), " +
    "recovery event on the next success, and an optional sealed payload released once to successor_url.",
  targetFields: ["alert_url", "successor_url"],
  createSchema: deadmanConfig,
  example: {
    period_seconds: 3600,
    grace_seconds: 300,
    alert_after_misses: 2,
    alert_url: "https://example.com/hooks/deadman",
    successor_url: "https://example.com/hooks/successor",
    label: "nightly backup job",
  },
  migrations: [
    { sql: [...SWITCH_TABLES, ...PINGS_TABLES, ...PAYLOAD_TABLES] },
    // Alerts may also go to a notify resource's people.
    { config: (c) => ({ alert_notify: null, ...c }) },
  ],
  // Pings at the public address and the alerts they cause are free: the day rate covers them.
  dayPriceMicro: 2000,
  defaultTtlSeconds: 30 * 86400,
  maxTtlSeconds: 366 * 86400,
  limits: {
    max_period_seconds: MAX_PERIOD_SECONDS,
    max_pings_kept: MAX_PINGS_KEPT,
    max_payload_bytes: MAX_PAYLOAD_BYTES,
  },
  sends: {
    "deadman.down":
      "To alert_url (and as a message through alert_notify): the switch went down (data.repeat is true for " +
      "the repeats every realert_seconds).",
    "deadman.up": "To alert_url: the first success ping after it was down.",
    "deadman.late": "To alert_url, with notify_late: a ping is overdue; the grace is running.",
    "deadman.payload":
      "To successor_url: the sealed payload, unsealed, once, when the switch went down (data.payload).",
  },
  // The notify resource is named by its management token, which proves the owner holds it; only its id is kept.
  sealCreate: async (env, config) => ({
    config: {
      ...config,
      alert_notify: config.alert_notify && (await checkNotifyTarget(env, config.alert_notify, "alert_notify")),
    },
    sealed: null,
  }),
  init: (store) => {
    initSwitch(store);
    initPayload(store);
  },
  usage: (store) => {
    const row = readSwitch(store.sql);
    return { pings: row.pings, alerts: row.alerts_total };
  },
  status: (store, config) => statusView(store, config),
  exportData: (store, config) => ({ status: statusView(store, config), pings: allPings(store) }),
  timer: kind.timer({
    nextDue: (store, config) => (releaseDue(store) ? store.now : switchDue(store, config)),
    prepare: (ctx, config) => {
      const row = readSwitch(ctx.sql);
      return unsealForRelease(ctx, row.state !== "down" && derive(row, config, ctx.now) === "down");
    },
    fire: (store, config, prepared) => {
      settle(store, config);
      realert(store, config);
      const row = readSwitch(store.sql);
      const about = { down_since: isoOrNull(row.down_at), last_success_at: isoOrNull(row.last_success_at) };
      releasePayload(store, config, prepared, about);
    },
  }),
  public: pingFace,
  ops: [
    kind.op({
      name: "get",
      method: "get",
      path: "",
      summary: "State, last ping, next due time, misses and the payload's state",
      priceMicro: OP_PRICE,
      input: noInput,
      output: deadmanStatus,
      run: (store, config) => statusView(store, config),
    }),
    kind.op({
      name: "ping",
      method: "post",
      path: "/ping",
      summary: "Ping with the management token (the public address does the same for free)",
      priceMicro: OP_PRICE,
      input: pingInput,
      output: deadmanStatus,
      example: { input: { exit_code: 0, message: "backup finished: 1,204 files" } },
      run: (store, config, input) => {
        const exitCode = input.exit_code ?? null;
        const signal = exitCode === null ? (input.signal ?? "success") : exitCode === 0 ? "success" : "fail";
        ping(store, config, { signal, exitCode, source: "api", method: "POST", body: input.message ?? null });
        return statusView(store, config);
      },
    }),
    kind.op({
      name: "pings",
      method: "get",
      path: "/pings",
      summary: "The ping log, newest first",
      priceMicro: OP_PRICE,
      input: pingsInput,
      output: pingPage,
      example: { input: { limit: 20 } },
      run: (store, _config, input) => listPings(store, input.limit, input.cursor),
    }),
    kind.op({
      name: "set_payload",
      method: "post",
      path: "/payload",
      summary: "Seal a payload for successor_url, released once when the switch goes down (replaces the one held)",
      priceMicro: PAYLOAD_PRICE,
      input: payloadInput,
      output: payloadState,
      errors: [409, 413],
      example: {
        input: {
          payload: { note: "If I stop: the backups are in bucket b-7, key in vault r_…", contact: "ops@example.com" },
        },
      },
      prepare: (ctx, config, input) => sealPayload(ctx, config, input.payload),
      run: (store, _config, _input, sealed) => storePayload(store, sealed),
    }),
    kind.op({
      name: "clear_payload",
      method: "delete",
      path: "/payload",
      summary: "Drop the held payload unreleased",
      priceMicro: OP_PRICE,
      input: noInput,
      output: payloadState,
      run: (store) => clearPayload(store),
    }),
    kind.op({
      name: "pause",
      method: "post",
      path: "/pause",
      summary: "Stop watching until the next ping (no lateness, no alerts)",
      priceMicro: OP_PRICE,
      input: noInput,
      output: deadmanStatus,
      run: (store, config) => {
        pause(store);
        return statusView(store, config);
      },
    }),
  ],
});
