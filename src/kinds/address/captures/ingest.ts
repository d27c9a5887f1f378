/**
 * The two steps of keeping a request at an address, for the kinds that do (inboxes, bins,
 * handshakes): `stage` (in `prepare`, outside the transaction) says "full" before anything is
 * written, hashes an inline body with WebCrypto and moves it to R2 once the inline budget is
 * spent; `keep` (in `handle`, in the transaction) stores the row.
 */
import { digestHex } from "../../../bytes";
import type { EngineStore, PrepareContext } from "../../../kind/kind";
import type { PublicRequest, StoredPublicBody } from "../../../kind/public-face";
import { checkRoom, INLINE_BODY_BUDGET, insert, statsOf, type CaptureLimits } from "./store";

export interface Staged {
  /** A small body this step moved to R2 (the inline budget was spent). */
  spilled: StoredPublicBody | null;
  /** Hex SHA-256 of an inline body (WebCrypto's, native, where `handle` could only hash in JS). */
  sha256: string;
}

/** The body's bytes as a signature check reads them: inline, or streamed from R2. */
export async function bodyBytes(
  ctx: PrepareContext,
  body: PublicRequest["body"],
): Promise<Uint8Array | AsyncIterable<Uint8Array>> {
  if (body === null) return new Uint8Array(0);
  if (body instanceof Uint8Array) return body;
  const object = await ctx.env.BUCKET.get(body.key);
  if (!object) throw new Error(`captures: the stored body ${body.key} is gone`);
  return object.body as unknown as AsyncIterable<Uint8Array>;
}

/**
 * `inlineUpTo`: a larger inline body is moved to R2 as well (a front door keeps what it pushes small).
 * `keep` checks the limits again in the transaction; a body moved here for a request that then fails
 * is deleted by discardStaged (the face's `discard`).
 */
export async function stage(
  ctx: PrepareContext,
  limits: CaptureLimits,
  request: PublicRequest,
  inlineUpTo = Infinity,
): Promise<Staged> {
  const stats = statsOf(ctx.sql);
  checkRoom(limits, stats, request.body instanceof Uint8Array ? request.body.length : (request.body?.size ?? 0), 0);
  const inline = request.body instanceof Uint8Array ? request.body : request.body === null ? new Uint8Array(0) : null;
  const sha256 = inline ? await digestHex(inline) : "";
  let spilled: StoredPublicBody | null = null;
  if (
    inline &&
    inline.length > 0 &&
    (stats.inline_bytes + inline.length > INLINE_BODY_BUDGET || inline.length > inlineUpTo)
  ) {
    const key = `${ctx.resourceId}/captures/${crypto.randomUUID()}`;
    await ctx.env.BUCKET.put(key, inline, { customMetadata: { expires_at: String(ctx.expiresAt) } });
    spilled = { key, size: inline.length, sha256 };
  }
  return { spilled, sha256 };
}

/** Deletes the body `stage` moved to R2, for a request that failed after it. */
export async function discardStaged(ctx: PrepareContext, staged: Staged | undefined): Promise<void> {
  if (staged?.spilled) await ctx.env.BUCKET.delete(staged.spilled.key);
}

/** Stores the request `stage` prepared; answers its seq. */
export function keep(
  store: EngineStore,
  limits: CaptureLimits,
  request: PublicRequest,
  staged: Staged,
  verdict: { verified: boolean; error: string | null } | null = null,
): number {
  const stored = staged.spilled ?? (request.body instanceof Uint8Array || request.body === null ? null : request.body);
  const inline = stored ? null : ((request.body as Uint8Array | null) ?? new Uint8Array(0));
  return insert(store, limits, {
    receivedAt: request.receivedAt,
    method: request.method,
    path: request.path,
    query: request.query,
    headers: request.headers,
    clientIp: request.clientIp,
    size: stored ? stored.size : inline!.length,
    sha256: stored ? stored.sha256 : staged.sha256,
    body: inline,
    bodyKey: stored?.key ?? null,
    verified: verdict?.verified ?? null,
    verificationError: verdict?.error ?? null,
  });
}
