/**
 * What the Watching kinds tell each other, as relays (src/delivery/relay.ts: staged in the
 * sender's transaction, retried, taken by the receiver's Durable Object):
 *
 * - a watch-group subscribes to each of its children (watches or groups) when it is made;
 * - a child then tells each subscriber its state whenever it moves (up, down, unknown), with a
 *   sequence number, so a retried or overtaken message never moves a group backwards;
 * - a watch or group that goes down triggers its escalation, and resolves it on recovery.
 *
 * A relay carries only what the receiver needs, and the receiver checks it as any input.
 */
import { z } from "@hono/zod-openapi";
import { sendRelay } from "../../delivery/relay";
import { sendEvent } from "../../delivery/events";
import { checkNotifyTarget, notifyPeople } from "../address/notify/people";
import { checkOwnedResource } from "../../kind/owned";
import type { Env } from "../../env";
import type { EngineStore } from "../../kind/kind";
import type { Json } from "../../json";
import { AppError } from "../../http/errors";

/** A watch's or group's state as its subscribers see it: paused and not-yet-checked are both unknown. */
export const SIGNAL_STATES = ["up", "down", "unknown"] as const;
export type SignalState = (typeof SIGNAL_STATES)[number];

const subscribe = z.object({ type: z.literal("subscribe") }).strict();
const state = z
  .object({
    type: z.literal("state"),
    state: z.enum(SIGNAL_STATES),
    seq: z.int().min(1),
    at: z.int(),
    reason: z.string().max(500),
  })
  .strict();
/**
 * `since`: when the episode began (the sender's down time); it ties a resolve to its trigger, whichever arrives first.
 */
const trigger = z
  .object({
    type: z.literal("trigger"),
    key: z.string().min(1).max(200),
    since: z.int(),
    title: z.string().min(1).max(250),
    details: z.string().max(2000),
  })
  .strict();
const resolve = z
  .object({ type: z.literal("resolve"), key: z.string().min(1).max(200), since: z.int(), reason: z.string().max(500) })
  .strict();

export const signal = z.discriminatedUnion("type", [subscribe, state, trigger, resolve]);
export type Signal = z.infer<typeof signal>;

/**
 * Reads a relayed message, or refuses it (the relay is logged as failed and is not retried into a different answer).
 */
export function readSignal(message: Json): Signal {
  const parsed = signal.safeParse(message);
  if (!parsed.success)
    throw new AppError(
      "validation_failed",
      `Not a watching signal: ${parsed.error.issues[0]?.message ?? "malformed"}.`,
    );
  return parsed.data;
}

/** Who hears this resource's state, and what it last said (one row). */
export const TABLES = [
  "CREATE TABLE signal_subscribers (id TEXT PRIMARY KEY, since INTEGER NOT NULL)",
  "CREATE TABLE signal_out (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL, state TEXT NOT " +
    "NULL, at INTEGER NOT NULL, reason TEXT NOT NULL)",
];

/** At most this many groups may follow one watch or group. */
export const MAX_SUBSCRIBERS = 50;

export function initSignals(store: EngineStore, initial: SignalState): void {
  store.sql.exec(
    "INSERT INTO signal_out (id, seq, state, at, reason) VALUES (1, 1, ?, ?, 'created')",
    initial,
    store.now,
  );
}

type Out = { seq: number; state: SignalState; at: number; reason: string };
const lastOut = (sql: SqlStorage) => sql.exec<Out>("SELECT seq, state, at, reason FROM signal_out").one();

function tell(store: EngineStore, to: string, out: Out): void {
  sendRelay(
    store,
    to,
    "watch.signal",
    { type: "state", state: out.state, seq: out.seq, at: out.at, reason: out.reason },
    `state:${out.seq}:${to}`,
  );
}

/** A group follows this resource from now on: it is told the current state at once. */
export function addSubscriber(store: EngineStore, from: string): void {
  const known = store.sql.exec("SELECT 1 FROM signal_subscribers WHERE id = ?", from).toArray().length > 0;
  if (!known) {
    const count = store.sql.exec<{ n: number }>("SELECT count(*) AS n FROM signal_subscribers").one().n;
    if (count >= MAX_SUBSCRIBERS)
      throw new AppError("conflict", `At most ${MAX_SUBSCRIBERS} groups may follow one resource.`);
    store.sql.exec("INSERT INTO signal_subscribers (id, since) VALUES (?, ?)", from, store.now);
  }
  tell(store, from, lastOut(store.sql));
}

export const subscribers = (sql: SqlStorage) =>
  sql.exec<{ id: string; since: number }>("SELECT id, since FROM signal_subscribers ORDER BY since, id").toArray();

/** Tells every subscriber the new state, when it is new. */
export function publishState(store: EngineStore, state: SignalState, reason: string): void {
  const last = lastOut(store.sql);
  if (last.state === state) return;
  const out = { seq: last.seq + 1, state, at: store.now, reason };
  store.sql.exec(
    "UPDATE signal_out SET seq = ?, state = ?, at = ?, reason = ?",
    out.seq,
    out.state,
    out.at,
    out.reason,
  );
  for (const s of subscribers(store.sql)) tell(store, s.id, out);
}

/**
 * Opens (or, with `resolve`, closes) the incident this resource keeps on its escalation: one per resource, keyed by its
 * id.
 */
export function escalate(
  store: EngineStore,
  escalationId: string,
  change:
    { open: true; title: string; details: string; since: number } | { open: false; reason: string; since: number },
): void {
  const key = store.resourceId;
  const message: Json = change.open
    ? { type: "trigger", key, since: change.since, title: change.title, details: change.details }
    : { type: "resolve", key, since: change.since, reason: change.reason };
  sendRelay(
    store,
    escalationId,
    "escalation.signal",
    message,
    `${change.open ? "trigger" : "resolve"}:${change.since}`,
  );
}

export interface Alert {
  type: string;
  data: Record<string, unknown>;
  /** What makes this alert this alert (a repeated alarm sends it once). */
  uniqueBy: string;
  title: string;
  body: string;
  priority: "low" | "normal" | "high";
  tags: string[];
}

/**
 * An event to notify_url and the same news to the people of the notify resource `alertNotify`, both staged in this
 * transaction.
 */
export function raise(store: EngineStore, alertNotify: string | null, a: Alert): void {
  if (store.notifyUrl) sendEvent(store, { url: store.notifyUrl }, a.type, a.data, a.uniqueBy);
  if (alertNotify)
    notifyPeople(
      store,
      alertNotify,
      { title: a.title, body: a.body, format: "text", priority: a.priority, tags: a.tags },
      `${a.type}:${a.uniqueBy}`,
    );
}

/** At create: the notify resource and the escalation a watch or group names by management token, kept as their ids. */
export async function alertTargetIds<C extends { alert_notify: string | null; escalation: string | null }>(
  env: Env,
  config: C,
): Promise<C> {
  return {
    ...config,
    alert_notify: config.alert_notify && (await checkNotifyTarget(env, config.alert_notify, "alert_notify")),
    escalation: config.escalation && (await checkOwnedResource(env, config.escalation, ["escalations"], "escalation")),
  };
}
