/**
 * The service's RS256 signing keys: access tokens, receipts and (later)
 * attestations are signed with the current key; the JWKS publishes it and,
 * during a rotation, the next one, so verifiers learn a key before it signs.
 * Keys come from secrets (JWK JSON with a `kid`). Outside production a missing
 * key is replaced by one generated for the life of the isolate, so
 * `npm run dev` works without setup; production refuses to sign without one.
 */
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK } from "jose";
import { isDevelopment, type Env } from "../env";

export const SIGNING_ALG = "RS256";

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export interface KeySet {
  current: SigningKey;
  /** Every key a verifier may meet: the current one and the next one. */
  published: SigningKey[];
}

const PUBLIC_MEMBERS = ["kty", "n", "e"] as const;
const cache = new Map<string, Promise<SigningKey>>();
let devKey: Promise<SigningKey> | undefined;

async function fromJwk(json: string): Promise<SigningKey> {
  const jwk = JSON.parse(json) as JWK;
  if (jwk.kty !== "RSA" || !jwk.d) throw new Error("signing key must be an RSA private JWK");
  const kid = jwk.kid ?? (await calculateJwkThumbprint(jwk));
  const privateKey = (await importJWK({ ...jwk, alg: SIGNING_ALG }, SIGNING_ALG)) as CryptoKey;
  const publicJwk: JWK = Object.fromEntries(PUBLIC_MEMBERS.map((m) => [m, jwk[m]]));
  return { kid, privateKey, publicJwk: { ...publicJwk, kid, alg: SIGNING_ALG, use: "sig" } };
}

function load(json: string): Promise<SigningKey> {
  let key = cache.get(json);
  if (!key) {
    key = fromJwk(json);
    cache.set(json, key);
  }
  return key;
}

async function generateDevKey(): Promise<SigningKey> {
  console.warn("OAUTH_PRIVATE_JWK is not set: signing with a key generated for this isolate (development only).");
  const { privateKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
  return fromJwk(JSON.stringify(await exportJWK(privateKey)));
}

export async function signingKeys(env: Env): Promise<KeySet> {
  let current: SigningKey;
  if (env.OAUTH_PRIVATE_JWK) current = await load(env.OAUTH_PRIVATE_JWK);
  else if (!isDevelopment(env)) throw new Error("OAUTH_PRIVATE_JWK is not configured");
  else current = await (devKey ??= generateDevKey());
  const next = env.OAUTH_NEXT_PRIVATE_JWK ? await load(env.OAUTH_NEXT_PRIVATE_JWK) : null;
  return { current, published: next && next.kid !== current.kid ? [current, next] : [current] };
}

export async function jwks(env: Env): Promise<{ keys: JWK[] }> {
  return { keys: (await signingKeys(env)).published.map((k) => k.publicJwk) };
}
