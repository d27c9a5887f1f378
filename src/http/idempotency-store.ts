/**
 * Storage of Idempotency-Key records in D1 (migrations/0003_idempotency.sql).
 *
 * Everything about a record is derived with HKDF from the caller's scope secret (its
 * credential, x402 payer or address) and the Idempotency-Key, neither of which is stored:
 * - the row id, so a key means nothing outside its caller's scope;
 * - an HMAC key for the request fingerprint (method, path, body), so a low-entropy body
 *   (a one-time secret, say) cannot be guessed back from its hash;
 * - an AES-GCM key for the stored response, so the management token of a replayed create
 *   (and any other secret in it) is only readable by a caller presenting the same key and
 *   credential: a copy of D1 alone opens nothing.
 */
import { fromBase64, toBase64, toHex } from "../bytes";
import { AppError } from "./errors";
import type { KeyMaterial } from "./idempotency-key";

export const REPLAY_WINDOW_MS = 24 * 3600 * 1000;
/** How long an in-flight claim holds the key if its request never finishes (a crashed isolate). */
const IN_FLIGHT_LOCK_MS = 5 * 60 * 1000;

export type { KeyMaterial };

export interface StoredResponse {
  status: number;
  headers: [string, string][];
  /** base64 of the body bytes. */
  body: string;
}

interface KeyRow {
  fingerprint: string;
  state: "in_flight" | "done";
  response: string | null;
}

const enc = new TextEncoder();
const HKDF_SALT = enc.encode("zeitvault idempotency v1");

export async function deriveKeyMaterial(
  scopeSecret: string,
  idempotencyKey: string,
  request: { method: string; path: string; body: Uint8Array },
): Promise<KeyMaterial> {
  const ikm = await crypto.subtle.importKey("raw", enc.encode(`${scopeSecret}\n${idempotencyKey}`), "HKDF", false, [
    "deriveBits",
  ]);
  const bits = new Uint8Array(
    await crypto.subtle.deriveBits(
      { name: "HKDF", hash: "SHA-256", salt: HKDF_SALT, info: new Uint8Array() },
      ikm,
      128 * 8,
    ),
  );
  const aesKey = await crypto.subtle.importKey("raw", bits.slice(32, 64), "AES-GCM", false, ["encrypt", "decrypt"]);
  const macKey = await crypto.subtle.importKey("raw", bits.slice(64, 96), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  const head = enc.encode(`${request.method}\n${request.path}\n`);
  const signed = new Uint8Array(head.length + request.body.length);
  signed.set(head);
  signed.set(request.body, head.length);
  const fingerprint = toHex(new Uint8Array(await crypto.subtle.sign("HMAC", macKey, signed)));
  const seed = await crypto.subtle.importKey("raw", bits.slice(96, 128), "HKDF", false, ["deriveBits"]);
  return { id: toHex(bits.slice(0, 32)), fingerprint, aesKey, seed };
}

/**
 * `length` bytes that only the same caller, sending the same request under the same key, derives
 * again: a create's management token and secrets, so a retry after a lost answer finds the resource
 * the first attempt made (and paid for) instead of making and charging another.
 */
export async function requestBytes(m: KeyMaterial, label: string, length: number): Promise<Uint8Array> {
  const info = enc.encode(label);
  return new Uint8Array(
    await crypto.subtle.deriveBits(
      { name: "HKDF", hash: "SHA-256", salt: enc.encode(m.fingerprint), info },
      m.seed,
      length * 8,
    ),
  );
}

export async function sealResponse(m: KeyMaterial, response: StoredResponse): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const plain = enc.encode(JSON.stringify(response));
  const sealed = new Uint8Array(
    await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: enc.encode(m.id) }, m.aesKey, plain),
  );
  return `${toBase64(iv)}.${toBase64(sealed)}`;
}

export async function openResponse(m: KeyMaterial, stored: string): Promise<StoredResponse> {
  const [iv, sealed] = stored.split(".");
  if (!iv || !sealed) throw new Error("malformed idempotency record");
  const plain = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: fromBase64(iv), additionalData: enc.encode(m.id) },
    m.aesKey,
    fromBase64(sealed),
  );
  return JSON.parse(new TextDecoder().decode(plain)) as StoredResponse;
}

/**
 * The atomic claim: inserts a new key, or takes over a stale one (an in-flight lock that
 * lapsed, an answer older than 24 h). True when this request now holds the key.
 */
export async function claimKey(db: D1Database, m: KeyMaterial, claim: string, now: number): Promise<boolean> {
  const row = await db
    .prepare(
      `INSERT INTO idempotency_keys (id, fingerprint, state, claim, response, created_at, expires_at)
       VALUES (?1, ?2, 'in_flight', ?3, NULL, ?4, ?5)
       ON CONFLICT (id) DO UPDATE SET fingerprint = excluded.fingerprint, state = 'in_flight', claim = excluded.claim,
         response = NULL, created_at = excluded.created_at, expires_at = excluded.expires_at
       WHERE idempotency_keys.expires_at <= ?4
       RETURNING claim`,
    )
    .bind(m.id, m.fingerprint, claim, now, now + IN_FLIGHT_LOCK_MS)
    .first<{ claim: string }>();
  return row?.claim === claim;
}

export async function findKey(db: D1Database, id: string): Promise<KeyRow | null> {
  return db.prepare("SELECT fingerprint, state, response FROM idempotency_keys WHERE id = ?").bind(id).first<KeyRow>();
}

/** Keeps the first answer for 24 h from the first request. */
export async function completeKey(
  db: D1Database,
  m: KeyMaterial,
  claim: string,
  sealed: string,
  claimedAt: number,
): Promise<void> {
  await db
    .prepare("UPDATE idempotency_keys SET state = 'done', response = ?, expires_at = ? WHERE id = ? AND claim = ?")
    .bind(sealed, claimedAt + REPLAY_WINDOW_MS, m.id, claim)
    .run();
}

export async function releaseKey(db: D1Database, m: KeyMaterial, claim: string): Promise<void> {
  await db.prepare("DELETE FROM idempotency_keys WHERE id = ? AND claim = ?").bind(m.id, claim).run();
}

/** Daily sweep: answers past their 24 h and lapsed locks. */
export async function sweepIdempotencyKeys(db: D1Database, now: number): Promise<void> {
  await db.prepare("DELETE FROM idempotency_keys WHERE expires_at <= ?").bind(now).run();
}

export const mismatch = () =>
  new AppError(
    "idempotency_mismatch",
    "This Idempotency-Key was already used with a different request (method, path or body); use a new key " +
      "for a new request.",
  );

export const inFlight = () =>
  new AppError(
    "idempotency_in_flight",
    "A request with this Idempotency-Key is still being processed; retry in a moment.",
    { headers: { "Retry-After": "1" } },
  );
