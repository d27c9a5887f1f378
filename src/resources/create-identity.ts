/**
 * A new resource's id, management token and signing secret (for events to notify_url and a kind's own requests:
 * shown once, kept sealed). Random, or, for a create paid by credit under an Idempotency-Key, derived from the key and
 * the request, so a retry whose first answer was lost (its process died after the resource was made and paid for,
 * and the key's lock lapsed) names the same resource, whose object answers with it and charges nothing
 * (docs/architecture.md#money-is-exact).
 *
 * The resource a lost answer made may have ended before the retry could come (a short TTL runs out within the key's
 * 5-minute lock). It is never revived: the retry derives the next generation of the identity instead, so a retry of
 * that retry finds its resource again. An expired one whose answer never reached its caller is given back first (its
 * caller never held its token, so never had it): every charge that stands belongs to an answered 2xx, and a retry
 * never pays twice for one request. A cancelled one was held by someone (a cancel needs the token) and stays paid.
 * Random again once the first is older than a key is kept: the key is then being used for a new request.
 */
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { issueManagementToken } from "../auth/tokens";
import { newSigningSecret } from "../delivery/signing";
import { loadSealing } from "../auth/sealing-loader";
import { REPLAY_WINDOW_MS, requestBytes, type KeyMaterial } from "../http/idempotency-store";
import { findResourceIndex } from "../kind/index-table";
import { accountStub } from "../stubs";

export type Identity = {
  id: string;
  mgmt: ReturnType<typeof issueManagementToken>;
  signingSecret: string | null;
  sealedSecret: string | null;
};

/** Generations a key's request may go through before its identity falls back to random (each one a D1 read). */
const MAX_GENERATIONS = 8;

/** The key's request and who pays for it (the account a lost answer's charge is given back to). */
export interface KeyedCreate {
  key: KeyMaterial;
  accountId: string;
  operation: string;
}

const label = (name: string, generation: number) => (generation ? `${name} #${generation}` : name);

export async function identity(c: Context<AppEnv>, signs: boolean, keyed?: KeyedCreate): Promise<Identity> {
  const seed = keyed ? await derivedSeed(c, keyed) : null;
  const mgmt = issueManagementToken(seed?.mgmt);
  const signingSecret = signs ? newSigningSecret(seed?.signing) : null;
  // AES is loaded by the first create that needs it, not at start-up (auth/sealing-loader.ts).
  const sealedSecret = signingSecret ? (await loadSealing()).seal(c.env, signingSecret) : null;
  return { id: mgmt.parts.resourceId, mgmt, signingSecret, sealedSecret };
}

/**
 * The seed of a credential the service makes for a new resource (a proxy's, Kind.sealCreate), from the create's
 * Idempotency-Key and request; undefined (random) without a key. Every generation shares it: a credential is checked
 * against the hash its own resource keeps, and an ended generation's is never checked again.
 */
export async function credentialSeed(key: KeyMaterial | undefined): Promise<Uint8Array | undefined> {
  return key ? requestBytes(key, "credential", 32) : undefined;
}

/** The seeds of the first generation whose resource is not an ended one, or null (random). */
async function derivedSeed(
  c: Context<AppEnv>,
  { key, accountId, operation }: KeyedCreate,
): Promise<{ mgmt: Uint8Array; signing: Uint8Array } | null> {
  for (let generation = 0; generation < MAX_GENERATIONS; generation++) {
    const mgmt = await requestBytes(key, label("management token", generation), 64);
    const made = await findResourceIndex(c.env.DB, issueManagementToken(mgmt).parts.resourceId);
    if (made && made.created_at <= Date.now() - REPLAY_WINDOW_MS) return null;
    if (!made || made.state === "active")
      return { mgmt, signing: await requestBytes(key, label("signing secret", generation), 32) };
    if (made.state === "expired") {
      // Idempotent: a second retry finds nothing left standing. Since its creation, with the account's clock margin.
      await accountStub(c.env, accountId).refund({
        resourceId: made.id,
        operation,
        since: made.created_at - 60_000,
        lostAnswer: true,
        requestId: c.get("requestId"),
      });
    }
  }
  return null;
}
