/**
 * The sealed payload of a dead-man switch: sealed (AES-GCM, auth/sealing.ts) in the
 * operation's asynchronous step, so plain text never reaches storage, and unsealed
 * in the timer's asynchronous step just before it goes to successor_url. Going down
 * only marks it due (pings trip the switch synchronously, where nothing can be
 * unsealed); the timer then comes at once and releases it, once, and forgets it.
 * It is write-only: neither status nor export can read it back.
 */
import { AppError } from "../../../../http/errors";
import type { EngineStore, PrepareContext } from "../../../../kind/kind";
import { seal, unseal } from "../../../../auth/sealing";
import { iso, isoOrNull } from "../../../../time";
import { sendEvent } from "../../../../delivery/events";
import { utf8Length } from "../../../../bytes";
import { MAX_PAYLOAD_BYTES, type DeadmanConfig } from "../schema";

type PayloadRow = {
  sealed: string | null;
  bytes: number | null;
  set_at: number | null;
  due: number;
  released_at: number | null;
  delivery_id: string | null;
  error: string | null;
};

export type SealedPayload = { sealed: string; bytes: number };
/** What the timer's step unsealed (or why it could not), tied to the sealed value it read. */
export type UnsealedPayload = { sealed: string; text: string } | { sealed: string; error: string } | undefined;

/** The module's tables as the kind's first migration creates them (see the kind's `migrations`). */
export const TABLES = [
  `CREATE TABLE deadman_payload (id INTEGER PRIMARY KEY CHECK (id = 1), sealed TEXT, bytes INTEGER, set_at INTEGER,
    due INTEGER NOT NULL DEFAULT 0, released_at INTEGER, delivery_id TEXT, error TEXT)`,
];

export function initPayload(store: EngineStore): void {
  store.sql.exec("INSERT INTO deadman_payload (id) VALUES (1)");
}

const read = (sql: SqlStorage) => sql.exec<PayloadRow>("SELECT * FROM deadman_payload").one();

export function payloadView(store: EngineStore) {
  const r = read(store.sql);
  const at = (ms: number | null) => isoOrNull(ms);
  return {
    held: r.sealed !== null,
    bytes: r.bytes,
    set_at: at(r.set_at),
    released_at: at(r.released_at),
    release_delivery_id: r.delivery_id,
    release_error: r.error,
  };
}

/** The operation's asynchronous step: checks and seals, before anything is written or charged. */
export async function sealPayload(
  ctx: PrepareContext,
  config: DeadmanConfig,
  payload: unknown,
): Promise<SealedPayload> {
  if (!config.successor_url)
    throw new AppError("conflict", "This switch has no successor_url to release a payload to; create one with it.");
  const text = JSON.stringify(payload);
  const bytes = utf8Length(text);
  if (bytes > MAX_PAYLOAD_BYTES)
    throw new AppError(
      "payload_too_large",
      `The payload is ${bytes} bytes as JSON; at most ${MAX_PAYLOAD_BYTES} are kept.`,
    );
  return { sealed: await seal(ctx.env, text), bytes };
}

export function storePayload(store: EngineStore, p: SealedPayload) {
  store.sql.exec(
    "UPDATE deadman_payload SET sealed = ?, bytes = ?, set_at = ?, due = 0, error = NULL",
    p.sealed,
    p.bytes,
    store.now,
  );
  return payloadView(store);
}

export function clearPayload(store: EngineStore) {
  store.sql.exec("UPDATE deadman_payload SET sealed = NULL, bytes = NULL, set_at = NULL, due = 0");
  return payloadView(store);
}

/** The switch went down: a held payload is to be released (by the timer, which can unseal). */
export function tripPayload(store: EngineStore): void {
  store.sql.exec("UPDATE deadman_payload SET due = 1 WHERE sealed IS NOT NULL");
}

export const releaseDue = (store: EngineStore): boolean => read(store.sql).due === 1;

/** The timer's asynchronous step: unseals only when a release is due or about to be (`tripping`). */
export async function unsealForRelease(ctx: PrepareContext, tripping: boolean): Promise<UnsealedPayload> {
  const row = read(ctx.sql);
  if (row.sealed === null || !(row.due === 1 || tripping)) return undefined;
  try {
    return { sealed: row.sealed, text: await unseal(ctx.env, row.sealed) };
  } catch (err) {
    // A key that no longer opens it: retrying every alarm would never succeed, so the release is given up and said so.
    console.error("deadman: sealed payload could not be unsealed", err);
    return { sealed: row.sealed, error: "the sealed payload could not be decrypted" };
  }
}

/**
 * Sends a due payload to successor_url, once, and forgets it. Without the matching unsealed text it waits for the next
 * run.
 */
export function releasePayload(
  store: EngineStore,
  config: DeadmanConfig,
  prepared: UnsealedPayload,
  about: Record<string, unknown>,
): void {
  const row = read(store.sql);
  if (row.due !== 1 || row.sealed === null || !config.successor_url || prepared?.sealed !== row.sealed) return;
  if ("error" in prepared) {
    store.sql.exec("UPDATE deadman_payload SET sealed = NULL, bytes = NULL, due = 0, error = ?", prepared.error);
    return;
  }
  const data = { ...about, payload: JSON.parse(prepared.text) as unknown, payload_set_at: iso(row.set_at!) };
  // Sensitive: the attempt log keeps the released secret sealed and never shows it.
  const deliveryId = sendEvent(
    store,
    { url: config.successor_url },
    "deadman.payload",
    data,
    `payload:${row.set_at}:${store.now}`,
    true,
  );
  store.sql.exec(
    "UPDATE deadman_payload SET sealed = NULL, bytes = NULL, due = 0, released_at = ?, delivery_id = ?, error = NULL",
    store.now,
    deliveryId,
  );
}
