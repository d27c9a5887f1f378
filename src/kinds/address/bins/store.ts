/** What a bin keeps beyond its captures (../captures/store.ts): the answer it gives, and its view link. */
import { hmac } from "@noble/hashes/hmac";
import { sha256 } from "@noble/hashes/sha2";
import type { Env } from "../../../env";
import type { EngineStore } from "../../../kind/kind";
import { subkey } from "../../../auth/subkeys";
import { toHex, utf8 } from "../../../bytes";
import { captureOf, newestBefore, type CaptureLimits, type Row } from "../captures/store";
import { MAX_BYTES, MAX_CAPTURES, type BinCapture, type BinResponse } from "./schema";

export const LIMITS: CaptureLimits = { noun: "bin", maxItems: MAX_CAPTURES, maxBytes: MAX_BYTES };

export const RESPONSE_TABLE =
  "CREATE TABLE bin_response (id INTEGER PRIMARY KEY CHECK (id = 1), response TEXT NOT NULL)";

export function saveResponse(sql: SqlStorage, response: BinResponse): BinResponse {
  sql.exec(
    "INSERT INTO bin_response (id, response) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET response = excluded.response",
    JSON.stringify(response),
  );
  return response;
}

export const responseOf = (sql: SqlStorage): BinResponse =>
  JSON.parse(sql.exec<{ response: string }>("SELECT response FROM bin_response").one().response) as BinResponse;

/**
 * The secret part of the view link: derived from the resource id with a key of the service's own,
 * so nothing is stored and the link can be shown again; 128 bits, so it cannot be guessed.
 */
export function viewToken(env: Env, resourceId: string): string {
  return toHex(hmac(sha256, subkey(env, "bin view links"), utf8(resourceId))).slice(0, 32);
}

/** `{public address}/_view/{token}`: the captures as a page, and each raw body below it. */
export const VIEW_SEGMENT = "_view";

export function viewUrl(store: EngineStore): string {
  return `${store.publicUrl}/${VIEW_SEGMENT}/${viewToken(store.env, store.resourceId)}`;
}

export const captureView = (store: EngineStore) => {
  const view = viewUrl(store);
  return (row: Row): BinCapture => ({
    ...captureOf(store, row),
    raw_url: row.size > 0 ? `${view}/${row.seq}/body` : null,
  });
};

/** A page of captures, newest first, before `before` (all when null); `next` is set when older ones remain. */
export function newestPage(store: EngineStore, before: number | null, limit: number) {
  const rows = newestBefore(store.sql, before, limit);
  const last = rows[rows.length - 1];
  const older =
    last !== undefined && store.sql.exec("SELECT 1 FROM captures WHERE seq < ? LIMIT 1", last.seq).toArray().length > 0;
  return { rows, next: older ? last.seq : null };
}
