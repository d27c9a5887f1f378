/**
 * The asynchronous step of an attested fetch, run by the resource's Durable
 * Object after authorization and before the charged transaction: fetch through
 * the egress guard, sign the receipt, keep the bytes in R2. Anything failing
 * here (a refused URL, a network error, an over-cap body) throws before any
 * charge; if the call is refused afterwards, `discardFetch` removes the object.
 */
import type { PrepareContext } from "../../../kind/kind";
import { AppError } from "../../../http/errors";
import { fetchGuarded } from "../../../delivery/fetch-guarded";
import { inlineContent, type Fetched, type InlineContent } from "./content";
import { receiptPayloadOf, signReceipt } from "./receipt";
import { checkRoom, objectKey, stored } from "./store";

import { INLINE_MAX_BYTES, type AttestConfig, type FetchInput } from "./schema";

/** What the step hands to `run`: enough to record the fetch, never the full body. */

/**
 * Where verifiers find the keys (docs/api.md#oauth-and-discovery: the auth URL, else the base URL the resource was
 * created under).
 */
function issuer(ctx: PrepareContext): string {
  return ctx.env.AUTH_URL || ctx.baseUrl;
}

export async function fetchAndKeep(ctx: PrepareContext, config: AttestConfig, input: FetchInput): Promise<Fetched> {
  // Storage is read before the first await, while the resource certainly exists (it may end during the fetch).
  // A full resource is refused before fetching for nothing; run checks again, atomically, with the body's size.
  const held = stored(ctx.sql);
  checkRoom(held, 0);
  const iss = issuer(ctx);
  // Lowercase names, so a caller's user-agent replaces the service's default instead of joining it.
  const headers = Object.fromEntries(Object.entries(input.headers).map(([k, v]) => [k.toLowerCase(), v]));
  const fetched = await fetchGuarded(ctx.env, input.url, {
    method: input.method,
    headers,
    maxBytes: input.max_bytes ?? config.max_bytes,
  });
  const fetchedAt = Date.now();
  checkRoom(held, fetched.body.length); // as of before the fetch: spares an R2 write that run would refuse

  const fetchId = `att_${crypto.randomUUID().replace(/-/g, "")}`;
  const payload = receiptPayloadOf({
    iss,
    receiptId: fetchId,
    resourceId: ctx.resourceId,
    method: input.method,
    requestedUrl: new URL(input.url).href,
    sentHeaderNames: ["user-agent", ...Object.keys(headers)],
    recordHeaders: input.receipt_headers ?? config.receipt_headers,
    fetched,
    fetchedAt,
  });
  const jws = await signReceipt(ctx.env, payload);
  const contentType = fetched.headers["content-type"] ?? null;
  const key = objectKey(ctx.resourceId, fetchId);
  await ctx.env.BUCKET.put(key, fetched.body, {
    // attachment: the bytes are a stranger's page; served from our origin they must not render as a document.
    httpMetadata: {
      contentType: contentType ?? "application/octet-stream",
      contentDisposition: `attachment; filename="${fetchId}"`,
    },
    customMetadata: { receipt_id: fetchId, body_sha256: fetched.sha256 },
    sha256: fetched.sha256, // R2 refuses the write if the bytes it got differ
  });
  return {
    fetchId,
    key,
    jws,
    size: fetched.body.length,
    contentType,
    content: input.include_content ? inlineContent(fetched.body, contentType) : null,
  };
}

export async function discardFetch(ctx: PrepareContext, fetched: Fetched): Promise<void> {
  await ctx.env.BUCKET.delete(fetched.key);
}

/** The get step: the stored body, when it is small enough to return inline. */
export async function readInline(ctx: PrepareContext, fetchId: string, wanted: boolean): Promise<InlineContent> {
  const row = ctx.sql
    .exec<{ size: number; content_type: string | null }>(
      "SELECT size, content_type FROM attest_fetches WHERE fetch_id = ?",
      fetchId,
    )
    .toArray()[0];
  if (!row) throw new AppError("not_found", `No fetch ${fetchId} in this resource.`);
  if (!wanted || row.size > INLINE_MAX_BYTES) return null;
  const object = await ctx.env.BUCKET.get(objectKey(ctx.resourceId, fetchId));
  if (!object) return null; // the resource is ending: its objects are being deleted
  return inlineContent(new Uint8Array(await object.arrayBuffer()), row.content_type);
}
