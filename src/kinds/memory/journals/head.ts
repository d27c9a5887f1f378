/**
 * The signed head: a compact JWS with the service's key over (resource, last seq,
 * its hash, its time). Signing awaits WebCrypto, so it happens in the operation's
 * prepare step: the head is read and signed there in one go, and exactly that is
 * returned. Appends committed while the signature was made are simply not covered:
 * the signed head was the journal's true head at `signed_at`, and the chain lets
 * anyone extend trust from it to later entries.
 */
import { CompactSign } from "jose";
import { SIGNING_ALG, signingKeys } from "../../../auth/signing-keys";
import type { PrepareContext } from "../../../kind/kind";
import { iso, isoOrNull } from "../../../time";
import { head } from "./store";
import { HEAD_TYP, type HeadPayload, type SignedHead } from "./schema";

/**
 * Where verifiers find the keys (docs/api.md#oauth-and-discovery: the auth URL, else the base URL the resource was
 * created under).
 */
function issuer(ctx: PrepareContext): string {
  return ctx.env.AUTH_URL || ctx.baseUrl;
}

export async function signHead(ctx: PrepareContext): Promise<SignedHead> {
  // Read synchronously, before the first await: no write can land between the row and the payload.
  const h = head(ctx.sql);
  const payload: HeadPayload = {
    iss: issuer(ctx),
    resource_id: ctx.resourceId,
    seq: h.head_seq,
    hash: h.head_hash,
    entry_time: isoOrNull(h.head_time),
    signed_at: iso(Date.now()),
  };
  const { current } = await signingKeys(ctx.env);
  const jws = await new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
    .setProtectedHeader({ alg: SIGNING_ALG, kid: current.kid, typ: HEAD_TYP })
    .sign(current.privateKey);
  return { head: payload, jws };
}
