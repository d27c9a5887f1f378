/**
 * schedules: a recurring cron call in an IANA time zone, signed, retried, with history (QStash, Temporal Schedules).
 */
import { noInput } from "../../../openapi/schemas";
import { kindOf } from "../../../kind/kind";
import { finished, historyPage, init, previewTimes, runNow, setPaused, timer, view } from "./store";
import {
  history,
  historyInput,
  preview,
  previewInput,
  scheduleConfig,
  scheduleStatus,
  type ScheduleConfig,
} from "./schema";
import { TABLES } from "./store";

const OP_PRICE = 100; // µUSD
const RUN_PRICE = 1000; // an outbound call, retried up to 8 times

const kind = kindOf<ScheduleConfig>();

export const schedules = kind.define({
  kind: "schedules",
  family: "time",
  title: "Schedule",
  summary:
    "A recurring HTTP call on a 5-field cron in an IANA time zone: start/end, pause/resume, run now, " +
    "preview, jitter, overlap policy, history.",
  targetFields: ["url"],
  createSchema: scheduleConfig,
  example: {
    cron: "0 9 * * 1-5",
    timezone: "Europe/Berlin",
    url: "https://example.com/hooks/standup",
    body: { task: "daily-report" },
    jitter_seconds: 30,
    overlap: "skip",
  },
  migrations: [{ sql: TABLES }],
  dayPriceMicro: 2000,
  defaultTtlSeconds: 30 * 86400,
  maxTtlSeconds: 366 * 86400,
  sends: { "schedule.fired": "The schedule's configured call, on each tick or on run now." },
  init,
  usage: (store, config) => ({ runs: view(store, config).runs }),
  status: (store, config) => view(store, config),
  exportData: (store, config) => ({ ...view(store, config), history: historyPage(store, 100, undefined).items }),
  timer,
  onDeliveryFinished: (store, _config, deliveryId, outcome) => finished(store, deliveryId, outcome),
  ops: [
    kind.op({
      name: "get",
      method: "get",
      path: "",
      summary: "Status of the schedule",
      priceMicro: OP_PRICE,
      input: noInput,
      output: scheduleStatus,
      run: (store, config) => view(store, config),
    }),
    kind.op({
      name: "next",
      method: "get",
      path: "/next",
      summary:
        "Preview the next fire times (up to count; none at or after the resource's expiry or end_at, so " +
        "fewer near the end)",
      priceMicro: OP_PRICE,
      input: previewInput,
      output: preview,
      example: { input: { count: 5 } },
      run: (store, config, input) => previewTimes(store, config, input.count),
    }),
    kind.op({
      name: "history",
      method: "get",
      path: "/history",
      summary: "Past runs, newest first",
      priceMicro: OP_PRICE,
      input: historyInput,
      output: history,
      example: { input: { limit: 20 } },
      run: (store, _config, input) => historyPage(store, input.limit, input.cursor),
    }),
    kind.op({
      name: "pause",
      method: "post",
      path: "/pause",
      summary: "Pause: no calls until resumed",
      priceMicro: OP_PRICE,
      input: noInput,
      output: scheduleStatus,
      run: (store, config) => setPaused(store, config, true),
    }),
    kind.op({
      name: "resume",
      method: "post",
      path: "/resume",
      summary: "Resume from the next tick after now",
      priceMicro: OP_PRICE,
      input: noInput,
      output: scheduleStatus,
      run: (store, config) => setPaused(store, config, false),
    }),
    kind.op({
      name: "run",
      method: "post",
      path: "/run",
      summary: "Make one call now (the schedule itself is unchanged)",
      priceMicro: RUN_PRICE,
      input: noInput,
      output: scheduleStatus,
      run: (store, config) => runNow(store, config),
    }),
  ],
});
