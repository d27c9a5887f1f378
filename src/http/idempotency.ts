/**
 * Idempotency-Key on every POST (docs/api.md#requests-and-conventions), as middleware in front of the routes: a
 * retried request is answered from the first one's record and never reaches the handler,
 * so a replayed create charges nothing and returns the same resource and token.
 *
 * - The key is scoped to the caller (caller-scope.ts) and claimed atomically in D1
 *   before the handler runs: of many concurrent requests with one key, one runs.
 * - Same key, same request (method, path, body) within 24 h: the first 2xx answer again
 *   (status, body, the headers worth repeating), with `Idempotent-Replayed: true`.
 * - Same key, another request: 422 `idempotency_mismatch`. Still running: 409
 *   `idempotency_in_flight`.
 * - Only a 2xx answer is kept. Every other answer did nothing and charged nothing
 *   (docs/api.md#errors: a failed call is never charged), so the key is released: the client
 *   may fix the cause (pay after a 402, correct a 422, wait out a 429 or a 5xx) and
 *   retry with the same key. Event streams and bodies over 1 MiB are not kept either.
 * Requests without the header pay nothing for this: no D1, no crypto.
 */
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { AppError } from "./errors";
import { callerScope } from "./caller-scope";
import { randomId } from "../auth/ids";
import { fromBase64, toBase64 } from "../bytes";
import { runtimeDied } from "../rpc/resource-faults";
import {
  claimKey,
  completeKey,
  deriveKeyMaterial,
  findKey,
  inFlight,
  mismatch,
  openResponse,
  releaseKey,
  sealResponse,
  type KeyMaterial,
  type StoredResponse,
} from "./idempotency-store";

export { sweepIdempotencyKeys } from "./idempotency-store";

const IDEMPOTENCY_HEADER = "Idempotency-Key";
export const MAX_KEY_LENGTH = 255;
const MAX_STORED_BODY_BYTES = 1024 * 1024;
/** Headers that belong to the answer itself; X-Request-Id and RateLimit-* are fresh on every response. */
const REPLAYED_HEADERS = ["content-type", "location", "cache-control", "payment-response", "x-payment-response"];
/** Attempts at the claim when the row vanishes between the failed claim and the read (its holder released it). */
const CLAIM_ATTEMPTS = 3;

function readKey(c: Context<AppEnv>): string | null {
  const key = c.req.header(IDEMPOTENCY_HEADER);
  if (key === undefined) return null;
  if (key.length === 0 || key.length > MAX_KEY_LENGTH || !/^[\x20-\x7e]+$/.test(key)) {
    throw new AppError(
      "invalid_request",
      `${IDEMPOTENCY_HEADER} must be 1 to ${MAX_KEY_LENGTH} printable ASCII characters (a UUID is a good choice).`,
      {
        errors: [
          {
            path: `header.${IDEMPOTENCY_HEADER}`,
            message: `must be 1 to ${MAX_KEY_LENGTH} printable ASCII characters`,
          },
        ],
      },
    );
  }
  return key;
}

function replay(stored: StoredResponse): Response {
  const headers = new Headers(stored.headers);
  headers.set("Idempotent-Replayed", "true");
  const body = stored.body ? fromBase64(stored.body) : null;
  return new Response(body, { status: stored.status, headers });
}

/**
 * The request body, buffered to fingerprint it: the body-limit middleware in front has already held it
 * to its route's limit (JSON, at most a few MiB). Streamed uploads are PUTs, which take no key.
 */
async function readBody(c: Context<AppEnv>): Promise<Uint8Array> {
  return new Uint8Array(await c.req.arrayBuffer());
}

/** The first answer as it will be replayed, or null when it is not to be kept. */
/**
 * A 2xx is kept for replay. So is a settlement that did not confirm in time (502 with the
 * transaction hash): the payment may still land, so a retry must see that answer again and
 * never run, and pay, a second time.
 */
async function keepable(res: Response, error: unknown): Promise<StoredResponse | null> {
  const unconfirmed =
    error instanceof AppError && error.code === "settlement_failed" && error.options.extra?.transaction !== undefined;
  if ((res.status < 200 || res.status > 299) && !unconfirmed) return null;
  if (res.headers.get("content-type")?.startsWith("text/event-stream")) return null;
  const body = new Uint8Array(await res.clone().arrayBuffer());
  if (body.length > MAX_STORED_BODY_BYTES) return null;
  const headers = REPLAYED_HEADERS.flatMap((name): [string, string][] => {
    const value = res.headers.get(name);
    return value === null ? [] : [[name, value]];
  });
  return { status: res.status, headers, body: toBase64(body) };
}

/** Holds the key for this request, or answers for it (replay, mismatch, in flight). */
async function claimOrAnswer(db: D1Database, m: KeyMaterial, claim: string, now: number): Promise<Response | null> {
  for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
    if (await claimKey(db, m, claim, now)) return null;
    const row = await findKey(db, m.id);
    if (!row) continue;
    if (row.fingerprint !== m.fingerprint) throw mismatch();
    if (row.state === "in_flight" || row.response === null) throw inFlight();
    return replay(await openResponse(m, row.response));
  }
  throw inFlight();
}

/** Keeps the answer, or frees the key; a storage failure is logged, never turned into a failed call. */
async function finish(
  c: Context<AppEnv>,
  m: KeyMaterial,
  claim: string,
  claimedAt: number,
  answered: boolean,
): Promise<void> {
  const db = c.env.DB;
  // An injected death of the whole runtime leaves the key as a real crash does: claimed.
  if (runtimeDied(c.env, c.error instanceof AppError ? c.error.toData() : undefined)) return;
  try {
    const stored = answered ? await keepable(c.res, c.error) : null;
    if (stored) await completeKey(db, m, claim, await sealResponse(m, stored), claimedAt);
    else await releaseKey(db, m, claim);
  } catch (err) {
    // The key stays locked until its in-flight lock lapses (5 min): a retry meanwhile gets 409, never a second run.
    console.error(`[${c.get("requestId")}] idempotency record not saved`, err);
  }
}

export const idempotency = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.method !== "POST") return next();
  const key = readKey(c);
  if (key === null) return next();
  const url = new URL(c.req.url);
  const body = await readBody(c);
  const scope = await callerScope(c);
  const m = await deriveKeyMaterial(scope.secret, key, { method: c.req.method, path: url.pathname + url.search, body });
  const claim = randomId("clm_");
  const now = Date.now();
  const answer = await claimOrAnswer(c.env.DB, m, claim, now);
  if (answer) return answer;
  c.set("idempotency", m);
  let answered = false;
  try {
    await next();
    answered = true;
  } finally {
    await finish(c, m, claim, now, answered);
  }
});
