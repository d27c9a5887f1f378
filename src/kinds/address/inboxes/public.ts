/**
 * The inbox's address: any method, at the address or any path below it, with a body up to 10 MiB.
 * `prepare` checks the signature (reading a large body from R2 in pieces) and moves a small body
 * to R2 once the inline budget is spent; `handle` stores the item in the transaction and answers
 * its seq. A refused request (the inbox full, a signature refused by choice) stores nothing.
 * Ingest is free: the day rate covers it.
 */
import { AppError } from "../../../http/errors";
import { unseal } from "../../../auth/sealing";
import { digestHex } from "../../../bytes";
import { definePublicFace, PUBLIC_METHODS, type PublicRequest, type StoredPublicBody } from "../../../resources/public-face";
import type { PrepareContext } from "../../../resources/kind";
import { verify, type Verdict } from "./signatures";
import { checkRoom, INLINE_BODY_BUDGET, insert, sealedSecret, statsOf } from "./store";
import { MAX_ITEM_BYTES, type InboxConfig } from "./schema";

const METHODS = PUBLIC_METHODS.filter((m) => m !== "HEAD");

interface Prepared {
  verdict: Verdict | null;
  /** A small body this step moved to R2 (the inline budget was spent). */
  spilled: StoredPublicBody | null;
  /** Hex SHA-256 of an inline body (WebCrypto's, here: native, where `handle` could only hash in JS). */
  sha256: string;
}

/** The body's bytes as the signature check reads them: inline, or streamed from R2. */
async function bodyOf(ctx: PrepareContext, body: PublicRequest["body"]): Promise<Uint8Array | AsyncIterable<Uint8Array>> {
  if (body === null) return new Uint8Array(0);
  if (body instanceof Uint8Array) return body;
  const object = await ctx.env.BUCKET.get(body.key);
  if (!object) throw new Error(`inboxes: the stored body ${body.key} is gone`);
  return object.body as unknown as AsyncIterable<Uint8Array>;
}

async function prepare(ctx: PrepareContext, config: InboxConfig, request: PublicRequest): Promise<Prepared> {
  let verdict: Verdict | null = null;
  if (config.verify) {
    const sealed = sealedSecret(ctx.sql);
    if (sealed === null) throw new Error("inboxes: a verifying inbox without its secret");
    verdict = await verify(config.verify.provider, unseal(ctx.env, sealed), request.headers, await bodyOf(ctx, request.body), request.receivedAt);
    if (!verdict.verified && config.verify.reject_unverified) throw new AppError("unauthorized", `The request's ${config.verify.provider} signature does not verify: ${verdict.error}.`);
  }
  // Full is said before anything is written; `handle` checks again in the transaction. A body moved here
  // for a request that then loses that race stays in R2 until the inbox ends (its prefix goes then).
  const stats = statsOf(ctx);
  checkRoom(stats, request.body instanceof Uint8Array ? request.body.length : (request.body?.size ?? 0), 0);
  const inline = request.body instanceof Uint8Array ? request.body : request.body === null ? new Uint8Array(0) : null;
  const sha256 = inline ? await digestHex(inline) : "";
  let spilled: StoredPublicBody | null = null;
  if (inline && inline.length > 0 && stats.inline_bytes + inline.length > INLINE_BODY_BUDGET) {
    const key = `${ctx.resourceId}/inbox/${crypto.randomUUID()}`;
    await ctx.env.BUCKET.put(key, inline, { customMetadata: { expires_at: String(ctx.expiresAt) } });
    spilled = { key, size: inline.length, sha256 };
  }
  return { verdict, spilled, sha256 };
}

export const inboxFace = definePublicFace<InboxConfig, Prepared>({
  routes: [
    { name: "receive", path: "", methods: METHODS, maxBodyBytes: MAX_ITEM_BYTES, summary: "Stored in arrival order, with its method, headers, query and raw body; answers the item's seq." },
    { name: "receive_below", path: "/{path*}", methods: METHODS, maxBodyBytes: MAX_ITEM_BYTES, summary: "The same, for any path below the address (kept in the item's `path`)." },
  ],
  prepare,
  handle(store, _config, request, prepared) {
    const stored = prepared.spilled ?? (request.body instanceof Uint8Array || request.body === null ? null : request.body);
    const inline = stored ? null : ((request.body as Uint8Array | null) ?? new Uint8Array(0));
    const seq = insert(store, {
      receivedAt: request.receivedAt,
      method: request.method,
      path: request.path,
      query: request.query,
      headers: request.headers,
      clientIp: request.clientIp,
      size: stored ? stored.size : inline!.length,
      sha256: stored ? stored.sha256 : prepared.sha256,
      body: inline,
      bodyKey: stored?.key ?? null,
      verified: prepared.verdict?.verified ?? null,
      verificationError: prepared.verdict?.error ?? null,
    });
    return { type: "json", body: { received: true, seq, verified: prepared.verdict?.verified ?? null } };
  },
});
