/**
 * The inbox's address: any method, at the address or any path below it, with a body up to 10 MiB.
 * `prepare` checks the signature (reading a large body from R2 in pieces) and stages the body
 * (../captures/ingest.ts); `handle` stores the item in the transaction and answers its seq. A
 * refused request (the inbox full, a signature refused by choice) stores nothing. Ingest is free:
 * the day rate covers it.
 */
import { AppError } from "../../../http/errors";
import { unseal } from "../../../auth/sealing";
import { definePublicFace, PUBLIC_METHODS } from "../../../kind/public-face";
import type { PrepareContext } from "../../../kind/kind";
import type { PublicRequest } from "../../../kind/public-face";
import { bodyBytes, discardStaged, keep, stage, type Staged } from "../captures/ingest";
import { verify, type Verdict } from "../captures/signatures";
import { LIMITS, sealedSecret } from "./store";
import { MAX_ITEM_BYTES, type InboxConfig } from "./schema";

const METHODS = PUBLIC_METHODS.filter((m) => m !== "HEAD");

interface Prepared {
  verdict: Verdict | null;
  staged: Staged;
}

async function prepare(ctx: PrepareContext, config: InboxConfig, request: PublicRequest): Promise<Prepared> {
  let verdict: Verdict | null = null;
  if (config.verify) {
    const sealed = sealedSecret(ctx.sql);
    if (sealed === null) throw new Error("inboxes: a verifying inbox without its secret");
    verdict = await verify(
      config.verify.provider,
      unseal(ctx.env, sealed),
      request.headers,
      await bodyBytes(ctx, request.body),
      request.receivedAt,
    );
    if (!verdict.verified && config.verify.reject_unverified)
      throw new AppError(
        "unauthorized",
        `The request's ${config.verify.provider} signature does not verify: ${verdict.error}.`,
      );
  }
  return { verdict, staged: await stage(ctx, LIMITS, request) };
}

export const inboxFace = definePublicFace<InboxConfig, Prepared>({
  routes: [
    {
      name: "receive",
      path: "",
      methods: METHODS,
      anyMethod: true,
      maxBodyBytes: MAX_ITEM_BYTES,
      summary: "Stored in arrival order, with its method, headers, query and raw body; answers the item's seq.",
    },
    {
      name: "receive_below",
      path: "/{path*}",
      methods: METHODS,
      anyMethod: true,
      maxBodyBytes: MAX_ITEM_BYTES,
      summary: "The same, for any path below the address (kept in the item's `path`).",
    },
  ],
  prepare,
  discard: (ctx, _config, prepared) => discardStaged(ctx, prepared.staged),
  handle(store, _config, request, prepared) {
    const seq = keep(store, LIMITS, request, prepared.staged, prepared.verdict);
    return { type: "json", body: { received: true, seq, verified: prepared.verdict?.verified ?? null } };
  },
});
