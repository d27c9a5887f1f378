/**
 * The alerts a watch sends: watch.down (and its repeats), watch.up and watch.changed, each titled by what the watch
 * looks at, and the escalation opened and resolved with them.
 */
import type { EngineStore } from "../../../kind/kind";
import { iso } from "../../../time";
import { escalate, raise, type Alert } from "../signals";
import type { WatchConfig } from "./schema";
import type { CheckRow, StateRow } from "./tables";
import { evidence } from "./views";

type WatchAlert = Omit<Alert, "tags"> & { type: "watch.down" | "watch.up" | "watch.changed" };

export function alert(store: EngineStore, config: WatchConfig, a: WatchAlert): void {
  raise(store, config.alert_notify, {
    ...a,
    data: { check_type: config.check.type, ...a.data },
    tags: ["watch", a.type.slice(6)],
  });
}

/** How the type reads in a title. */
const TYPE_WORDS: Record<WatchConfig["check"]["type"], string> = {
  http_status: "HTTP status",
  keyword: "Keyword",
  content_change: "Content",
  json_value: "JSON value",
  response_time: "Response time",
  header: "Header",
  redirect: "Redirect",
  dns_record: "DNS",
  rss: "Feed",
  heartbeat: "Heartbeat",
  domain_expiry: "Domain expiry",
  chain_balance: "Balance",
  number_threshold: "Number",
};

/**
 * The watch as people read it in an alert's title (and an incident's, on its ack page): by the owner's
 * label, else by its type and what it looks at; never by its resource id.
 */
export function what(store: EngineStore, config: WatchConfig): string {
  if (store.label) return `Watch “${store.label}”`;
  const c = config.check;
  const target =
    "url" in c ? c.url : "domain" in c ? c.domain : "name" in c ? c.name : "address" in c ? c.address : null;
  return `${TYPE_WORDS[c.type]} watch${target ? ` of ${target}` : ""}`;
}

export function goDown(
  store: EngineStore,
  config: WatchConfig,
  row: StateRow,
  check: CheckRow,
  failures: number,
  number: number,
): void {
  const downAt = row.down_at ?? store.now;
  alert(store, config, {
    type: "watch.down",
    uniqueBy: `down:${downAt}:${number}`,
    priority: "high",
    data: {
      state: "down",
      down_since: iso(downAt),
      consecutive_failures: failures,
      alert_number: number,
      repeat: number > 1,
      evidence: evidence(check),
    },
    title: `${what(store, config)} is down${number > 1 ? ` (alert ${number})` : ""}`,
    body: `${check.error ?? "The check failed."} ${failures} consecutive failed check(s); down since ${iso(downAt)}.`,
  });
  if (number === 1 && config.escalation)
    escalate(store, config.escalation, {
      open: true,
      since: downAt,
      title: `${what(store, config)} is down`,
      details: check.error ?? "The check failed.",
    });
}

export function comeUp(store: EngineStore, config: WatchConfig, row: StateRow, check: CheckRow): void {
  const downAt = row.down_at!;
  const downtime = Math.round((store.now - downAt) / 1000);
  alert(store, config, {
    type: "watch.up",
    uniqueBy: `up:${downAt}`,
    priority: "normal",
    data: { state: "up", down_since: iso(downAt), downtime_seconds: downtime, evidence: evidence(check) },
    title: `${what(store, config)} is up again`,
    body: `Recovered at ${iso(store.now)} after ${downtime} s down.`,
  });
  if (config.escalation)
    escalate(store, config.escalation, { open: false, since: downAt, reason: "the watch recovered" });
}
