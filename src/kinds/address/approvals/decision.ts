/**
 * The decision record: what was decided, by which link, when, with the hash of what was asked,
 * signed as a compact JWS with the service's key (verifiable against /.well-known/jwks.json).
 * Signing awaits WebCrypto, so it is done in the asynchronous step before the transaction that
 * records it; a record signed for a request someone else decided first is never kept.
 */
import { CompactSign } from "jose";
import { SIGNING_ALG, signingKeys } from "../../../auth/signing-keys";
import type { PrepareContext } from "../../../kind/kind";
import { iso } from "../../../time";
import { approvalRow } from "./store";
import { DECISION_TYP, type ApprovalsConfig, type DecisionPayload } from "./schema";

export interface Signed {
  decision: DecisionPayload;
  jws: string;
}

/** A choice of `optionId` (null: the expiry without a default) by `decidedBy`, signed. */
export async function signDecision(
  ctx: PrepareContext,
  config: ApprovalsConfig,
  optionId: string | null,
  comment: string | null,
  decidedBy: string,
  expired: boolean,
): Promise<Signed> {
  const option = config.options.find((o) => o.id === optionId) ?? null;
  const decision: DecisionPayload = {
    iss: ctx.env.AUTH_URL || ctx.baseUrl,
    approval_id: ctx.resourceId,
    request_sha256: approvalRow(ctx.sql).request_sha256,
    state: expired ? "expired" : option!.outcome,
    outcome: option?.outcome ?? null,
    option: option?.id ?? null,
    comment,
    decided_by: decidedBy,
    decided_at: iso(ctx.now),
  };
  const { current } = await signingKeys(ctx.env);
  const jws = await new CompactSign(new TextEncoder().encode(JSON.stringify(decision)))
    .setProtectedHeader({ alg: SIGNING_ALG, kid: current.kid, typ: DECISION_TYP })
    .sign(current.privateKey);
  return { decision, jws };
}
