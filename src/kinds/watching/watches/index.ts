/**
 * watches: a check made by the resource's alarm every interval (13 types: HTTP status, keyword,
 * content change, JSON value, response time, header, redirect, DNS over HTTPS, RSS, heartbeat,
 * domain expiry by RDAP, EVM balance, a number's threshold), with alert_after consecutive
 * failures before watch.down, recover_after successes before watch.up, repeats while down,
 * watch.changed for the change types, a bounded history, and a pause switch. Uptime Kuma,
 * changedetection.io and Cronitor are the bar. Groups follow a watch's state (signals.ts).
 */
import { noInput } from "../../../openapi/schemas";
import { kindOf } from "../../../kind/kind";
import {
  addSubscriber,
  alertTargetIds,
  initSignals,
  readSignal,
  subscribers,
  TABLES as SIGNAL_TABLES,
} from "../signals";
import { checkCreatable, runCheck, type Outcome } from "./checks";
import { heartbeatFace } from "./public";
import { initState, nextCheckAt, pause, recordCheck, resume } from "./store";
import { readState, TABLES as STATE_TABLES } from "./tables";
import { allChecks, history, statusView } from "./views";
import { MAX_HISTORY, MAX_INTERVAL_SECONDS, MAX_RESPONSE_BYTES, MAX_TIMEOUT_MS, MIN_INTERVAL_SECONDS } from "./limits";
import { checkResult, historyInput, historyPage, watchConfig, watchStatus, type WatchConfig } from "./schema";
import type { PrepareContext } from "../../../kind/kind";

const OP_PRICE = 100; // µUSD
/** One outbound check, now. */
const CHECK_PRICE = 1000;

const kind = kindOf<WatchConfig>();

/** The check, outside any transaction: it may fetch. */
async function check(
  ctx: PrepareContext,
  config: WatchConfig,
): Promise<{ outcome: Outcome; scheduledAt: number | null; startedAt: number }> {
  const row = readState(ctx.sql);
  const userAgent = `${ctx.env.SERVICE_NAME}-watch/1.0 (${ctx.resourceId})`;
  const lastPing = row.last_ping_at === null ? null : { at: row.last_ping_at, failed: row.last_ping_failed === 1 };
  const outcome = await runCheck({ ctx, config, memo: row.memo, userAgent }, lastPing);
  return { outcome, scheduledAt: row.next_check_at, startedAt: ctx.now };
}

export const watches = kind.define({
  kind: "watches",
  family: "watching",
  title: "Watch",
  summary:
    "A check of one of 13 types every interval_seconds (≥ 60): watch.down after alert_after failures in a " +
    "row, watch.up after recover_after successes, watch.changed; a check history.",
  createSchema: watchConfig,
  // A heartbeat, so the example shows the public address too; every type is in the schema of `check`.
  example: {
    check: { type: "heartbeat", grace_seconds: 300 },
    interval_seconds: 3600,
    alert_after: 1,
    recover_after: 1,
    realert_seconds: 86400,
  },
  migrations: [{ sql: [...STATE_TABLES, ...SIGNAL_TABLES] }],
  dayPriceMicro: 5000,
  defaultTtlSeconds: 30 * 86400,
  maxTtlSeconds: 366 * 86400,
  limits: {
    min_interval_seconds: MIN_INTERVAL_SECONDS,
    max_interval_seconds: MAX_INTERVAL_SECONDS,
    max_timeout_ms: MAX_TIMEOUT_MS,
    max_response_bytes: MAX_RESPONSE_BYTES,
    max_history: MAX_HISTORY,
  },
  sends: {
    "watch.down":
      "alert_after checks failed (data.evidence: the failing check); repeated every realert_seconds (data.repeat).",
    "watch.up": "recover_after checks passed after it was down (data.downtime_seconds).",
    "watch.changed": "What a change type watches changed (data.before, data.after; rss: data.items).",
  },
  // Every type names its target in one of these.
  targetFields: ["check.url", "check.resolver_url", "check.rdap_url", "check.rpc_url"],
  checkCreate: (config) => checkCreatable(config),
  // Named resources by their management tokens (proof the owner holds them); only their ids are kept.
  sealCreate: async (env, config) => ({ config: await alertTargetIds(env, config), sealed: null }),
  init: (store, config) => {
    initState(store, config);
    initSignals(store, "unknown");
  },
  usage: (store) => {
    const row = readState(store.sql);
    return { checks: row.checks, failures: row.failed_total, alerts: row.alerts };
  },
  status: (store, config) => statusView(store, config),
  exportData: (store, config) => ({
    status: statusView(store, config),
    checks: allChecks(store.sql),
    followers: subscribers(store.sql).map((s) => s.id),
  }),
  timer: kind.timer({
    nextDue: (store) => nextCheckAt(store),
    prepare: check,
    fire: (store, config, prepared) => void recordCheck(store, config, prepared, prepared.scheduledAt),
  }),
  public: heartbeatFace,
  // A watch-group asks to follow this watch's state.
  relay: (store, _config, message, _relayId, from) => {
    const signal = readSignal(message);
    if (signal.type === "subscribe") addSubscriber(store, from);
  },
  ops: [
    kind.op({
      name: "get",
      method: "get",
      path: "",
      summary: "State, counters, the last check and the next",
      priceMicro: OP_PRICE,
      input: noInput,
      output: watchStatus,
      run: (store, config) => statusView(store, config),
    }),
    kind.op({
      name: "history",
      method: "get",
      path: "/checks",
      summary: `The check history, newest first (the last ${MAX_HISTORY} checks)`,
      priceMicro: OP_PRICE,
      input: historyInput,
      output: historyPage,
      example: { input: { limit: 20, only: "failures" } },
      run: (store, _config, input) => history(store, input.limit, input.cursor, input.only),
    }),
    kind.op({
      name: "check",
      method: "post",
      path: "/checks",
      summary: "Check now: recorded and counted like any check; the schedule is unchanged",
      priceMicro: CHECK_PRICE,
      input: noInput,
      output: checkResult,
      prepare: (ctx, config) => check(ctx, config),
      run: (store, config, _input, prepared) => recordCheck(store, config, prepared, null),
    }),
    kind.op({
      name: "pause",
      method: "post",
      path: "/pause",
      summary: "Maintenance: no checks until resumed (a down episode ends without watch.up)",
      priceMicro: OP_PRICE,
      input: noInput,
      output: watchStatus,
      run: (store, config) => (pause(store, config), statusView(store, config)),
    }),
    kind.op({
      name: "resume",
      method: "post",
      path: "/resume",
      summary: "Checks start again at once (a heartbeat after an interval)",
      priceMicro: OP_PRICE,
      input: noInput,
      output: watchStatus,
      run: (store, config) => (resume(store, config), statusView(store, config)),
    }),
  ],
});
