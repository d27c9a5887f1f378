/**
 * OAuth access tokens (docs/api.md#credentials, RFC 9068 profile): RS256 JWTs with
 * `typ: at+jwt`, valid 3600 s, naming the credit token id (never its secret).
 * Verification accepts only RS256 from our own keys, issuer and audience.
 */
import { createLocalJWKSet, jwtVerify, SignJWT } from "jose";
import type { Env } from "../env";
import { AppError } from "../http/errors";
import { jwks, SIGNING_ALG, signingKeys } from "./signing-keys";

export const ACCESS_TOKEN_SECONDS = 3600;

export interface ServiceUrls {
  /** `iss`: where the authorization server lives. */
  authUrl: string;
  /** `aud`: the API the token is for. */
  baseUrl: string;
}

export const scopeOf = (env: Env) => `${env.SERVICE_NAME}.write`;

export async function issueAccessToken(env: Env, urls: ServiceUrls, tokenId: string): Promise<string> {
  const { current } = await signingKeys(env);
  return new SignJWT({ client_id: tokenId, scope: scopeOf(env) })
    .setProtectedHeader({ alg: SIGNING_ALG, typ: "at+jwt", kid: current.kid })
    .setIssuer(urls.authUrl)
    .setSubject(tokenId)
    .setAudience(urls.baseUrl)
    .setIssuedAt()
    .setExpirationTime(`${ACCESS_TOKEN_SECONDS}s`)
    .setJti(crypto.randomUUID())
    .sign(current.privateKey);
}

/** A compact JWS shape: three base64url segments. Anything else is not an access token. */
export const looksLikeJwt = (token: string) => /^[\w-]+\.[\w-]+\.[\w-]*$/.test(token);

/** Returns the credit token id the access token was issued to, or throws 401. */
export async function verifyAccessToken(env: Env, urls: ServiceUrls, token: string): Promise<string> {
  try {
    const { payload } = await jwtVerify(token, createLocalJWKSet(await jwks(env)), {
      algorithms: [SIGNING_ALG],
      typ: "at+jwt",
      issuer: urls.authUrl,
      audience: urls.baseUrl,
      requiredClaims: ["sub", "exp", "iat", "jti"],
    });
    const scopes = String(payload.scope ?? "").split(" ");
    if (!scopes.includes(scopeOf(env)))
      throw new AppError("forbidden", `The access token lacks the scope ${scopeOf(env)}.`);
    return payload.sub!;
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw new AppError("unauthorized", "The access token is not valid (signature, issuer, audience, type or expiry).");
  }
}
