/**
 * A submission: `prepare` (outside the transaction) checks the target with the egress guard,
 * decodes the body and moves one that is large or binary to R2; `submit` (in the transaction)
 * settles the idempotency key and hands the request to the delivery pipeline (store.send), whose
 * outbox row commits with it. A refused submission leaves nothing: `discard` deletes the object.
 */
import { AppError } from "../../../http/errors";
import { fromBase64, sha256Hex, utf8 } from "../../../bytes";
import { allowsPrivateTargets, checkEgressUrl } from "../../../delivery/egress-guard";
import { MAX_INLINE_BODY_BYTES } from "../../../delivery/outbound";
import type { EngineStore, PrepareContext } from "../../../kind/kind";
import { MAX_BODY_BYTES, MAX_KEYS, type SubmitInput } from "./schema";

export const TABLES = [
  `CREATE TABLE delivery_keys (
    key TEXT PRIMARY KEY,
    delivery_id TEXT NOT NULL,
    -- What was submitted under the key, so a different request under it is refused.
    request_sha256 TEXT NOT NULL
  )`,
];

export interface Prepared {
  text: string | null;
  /** A large or binary body, stored below the resource's prefix. */
  key: string | null;
  contentType: string | null;
  requestSha256: string;
}

const hasHeader = (headers: Record<string, string>, name: string) =>
  Object.keys(headers).some((k) => k.toLowerCase() === name);

export async function prepare(ctx: PrepareContext, input: SubmitInput): Promise<Prepared> {
  checkEgressUrl(input.url, allowsPrivateTargets(ctx.env.ALLOW_PRIVATE_TARGETS), "url");
  let bytes: Uint8Array | null = null;
  let text: string | null = null;
  let contentType: string | null = null;
  if (input.body_base64 !== undefined) {
    bytes = fromBase64(input.body_base64);
    contentType = "application/octet-stream";
  } else if (input.body !== undefined) {
    text = typeof input.body === "string" ? input.body : JSON.stringify(input.body);
    contentType = typeof input.body === "string" ? "text/plain; charset=utf-8" : "application/json";
  }
  const size = bytes?.length ?? (text === null ? 0 : utf8(text).length);
  if (size > MAX_BODY_BYTES)
    throw new AppError(
      "payload_too_large",
      `The body is ${size} bytes; a delivery carries at most ${MAX_BODY_BYTES}.`,
      { extra: { max_body_bytes: MAX_BODY_BYTES } },
    );
  const digest = sha256Hex(bytes ?? utf8(text ?? ""));
  const requestSha256 = sha256Hex(
    JSON.stringify([
      input.url,
      input.method,
      input.headers,
      input.body_base64 !== undefined,
      digest,
      input.retry_delays ?? null,
    ]),
  );
  let key: string | null = null;
  if (bytes || (text !== null && size > MAX_INLINE_BODY_BYTES)) {
    key = `${ctx.resourceId}/deliveries/${crypto.randomUUID()}`;
    await ctx.env.BUCKET.put(key, bytes ?? utf8(text!), { customMetadata: { expires_at: String(ctx.expiresAt) } });
    text = null;
  }
  return { text, key, contentType, requestSha256 };
}

export async function discard(ctx: PrepareContext, prepared: Prepared): Promise<void> {
  if (prepared.key) await ctx.env.BUCKET.delete(prepared.key);
}

export function submit(store: EngineStore, input: SubmitInput, prepared: Prepared, retryDelays: number[] | undefined) {
  if (input.idempotency_key !== undefined) {
    const known = store.sql
      .exec<{ delivery_id: string; request_sha256: string }>(
        "SELECT delivery_id, request_sha256 FROM delivery_keys WHERE key = ?",
        input.idempotency_key,
      )
      .toArray()[0];
    if (known) {
      if (known.request_sha256 !== prepared.requestSha256)
        throw new AppError(
          "conflict",
          `The idempotency key ${JSON.stringify(input.idempotency_key)} was used for a different request.`,
        );
      if (prepared.key) store.dropObjects([prepared.key]);
      return {
        delivery_id: known.delivery_id,
        duplicate: true,
        delivery: store.deliveries.get(known.delivery_id) as never,
      };
    }
    const keys = store.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM delivery_keys").one().n;
    if (keys >= MAX_KEYS)
      throw new AppError(
        "storage_full",
        `This resource keeps at most ${MAX_KEYS} idempotency keys; submit without one or use another resource.`,
      );
  }
  const headers =
    prepared.contentType && !hasHeader(input.headers, "content-type")
      ? { ...input.headers, "content-type": prepared.contentType }
      : input.headers;
  const id = store.send({
    url: input.url,
    method: input.method,
    headers,
    eventType: "delivery.request",
    body: prepared.key ? { key: prepared.key } : prepared.text,
    ...(retryDelays ? { retryDelays } : {}),
  });
  if (input.idempotency_key !== undefined)
    store.sql.exec("INSERT INTO delivery_keys VALUES (?, ?, ?)", input.idempotency_key, id, prepared.requestSha256);
  return { delivery_id: id, duplicate: false, delivery: store.deliveries.get(id) as never };
}
