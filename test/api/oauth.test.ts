/**
 * OAuth 2.0 client credentials through a real, strict client (oauth4webapi):
 * discovery, token, a paid call with the access token, and verification with
 * jose against the published JWKS; then every forged or stale token refused.
 */
import { SELF, env } from "cloudflare:test";
import { createLocalJWKSet, importJWK, jwtVerify, SignJWT, type JWK } from "jose";
import * as oauth from "oauth4webapi";
import { describe, expect, it } from "vitest";
import { jwks } from "../../src/auth/signing-keys";
import { balanceOf, buyCredits, call, json, ORIGIN } from "../harness";

const issuer = new URL(ORIGIN);
const viaWorker = { [oauth.customFetch]: (url: string, init?: RequestInit) => SELF.fetch(url, init) };

async function accessTokenFor(token: string, tokenId: string, scope = "zeitvault.write") {
  const as = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { ...viaWorker, algorithm: "oauth2" }),
  );
  const client = { client_id: tokenId };
  const res = await oauth.clientCredentialsGrantRequest(
    as,
    client,
    oauth.ClientSecretPost(token),
    { scope },
    viaWorker,
  );
  return { as, client, res };
}

const tokenForm = (fields: Record<string, string>) =>
  call("POST", "/oauth/token", {
    body: new URLSearchParams(fields).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });

async function signWith(
  claims: Record<string, unknown>,
  header: { alg: string; typ?: string; kid?: string },
  key: CryptoKey | Uint8Array,
) {
  return new SignJWT(claims).setProtectedHeader(header).sign(key);
}

const baseClaims = (sub: string) => ({
  sub,
  client_id: sub,
  scope: "zeitvault.write",
  jti: crypto.randomUUID(),
  iss: ORIGIN,
  aud: ORIGIN,
});

describe("OAuth client credentials", () => {
  it("discovers, gets a token, pays with it, and the token verifies against the JWKS", async () => {
    const { token, tokenId } = await buyCredits(1);
    const { as, client, res } = await accessTokenFor(token, tokenId);
    const grant = await oauth.processClientCredentialsResponse(as, client, res);
    expect(grant).toMatchObject({ token_type: "bearer", expires_in: 3600, scope: "zeitvault.write" });

    const created = await call("POST", "/v1/counters", {
      body: { ttl_seconds: 86400 },
      headers: { authorization: `Bearer ${grant.access_token}` },
    });
    expect(created.status, await created.clone().text()).toBe(201);
    expect((await balanceOf(token)).spent_usd).toBe(0.001);
    const balance = await call("GET", "/v1/credits/balance", {
      headers: { authorization: `Bearer ${grant.access_token}` },
    });
    expect((await json(balance)).token_id).toBe(tokenId);

    const published = await json<{ keys: JWK[] }>(await call("GET", "/.well-known/jwks.json"));
    const { payload, protectedHeader } = await jwtVerify(grant.access_token, createLocalJWKSet(published), {
      issuer: ORIGIN,
      audience: ORIGIN,
      typ: "at+jwt",
    });
    expect(protectedHeader).toMatchObject({ alg: "RS256", kid: "test-key-1" });
    expect(payload).toMatchObject({ sub: tokenId, client_id: tokenId, scope: "zeitvault.write" });
    expect(payload.exp! - payload.iat!).toBe(3600);
    expect(JSON.stringify(payload)).not.toContain(token);
  });

  it("publishes RFC 8414 and RFC 9728 metadata", async () => {
    const meta = await json(await call("GET", "/.well-known/oauth-protected-resource"));
    expect(meta).toMatchObject({
      resource: ORIGIN,
      authorization_servers: [ORIGIN],
      scopes_supported: ["zeitvault.write"],
    });
    const as = await json(await call("GET", "/.well-known/oauth-authorization-server"));
    expect(as).toMatchObject({
      issuer: ORIGIN,
      token_endpoint: `${ORIGIN}/oauth/token`,
      grant_types_supported: ["client_credentials"],
    });
  });

  it("answers RFC 6749 errors: wrong secret, wrong scope, wrong grant, not a form", async () => {
    const { token, tokenId } = await buyCredits(0.25);
    const other = await buyCredits(0.25);
    const wrongSecret = await tokenForm({
      grant_type: "client_credentials",
      client_id: tokenId,
      client_secret: other.token,
    });
    expect(wrongSecret.status).toBe(401);
    expect(await json(wrongSecret), "wrong secret").toMatchObject({ error: "invalid_client" });
    const typo = await tokenForm({
      grant_type: "client_credentials",
      client_secret: token.slice(0, -1) + (token.endsWith("x") ? "y" : "x"),
    });
    expect((await json(typo)).error).toBe("invalid_client");
    const scope = await accessTokenFor(token, tokenId, "zeitvault.admin");
    expect(scope.res.status).toBe(400);
    expect((await json(scope.res)).error).toBe("invalid_scope");
    const grant = await tokenForm({ grant_type: "password", client_secret: token });
    expect((await json(grant)).error).toBe("unsupported_grant_type");
    const notForm = await call("POST", "/oauth/token", { body: { grant_type: "client_credentials" } });
    expect((await json(notForm)).error).toBe("invalid_request");
    const badBasic = await call("POST", "/oauth/token", {
      body: "grant_type=client_credentials",
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: "Basic %%%" },
    });
    expect(badBasic.status).toBe(401);
    expect((await json(badBasic)).error).toBe("invalid_client");
  });

  it("refuses expired, unsigned, HS256-confused and foreign-issuer tokens", async () => {
    const { token, tokenId } = await buyCredits(1);
    const jwk = JSON.parse(env.OAUTH_PRIVATE_JWK!) as JWK;
    const privateKey = (await importJWK({ ...jwk, alg: "RS256" }, "RS256")) as CryptoKey;
    const now = Math.floor(Date.now() / 1000);
    const header = { alg: "RS256", typ: "at+jwt", kid: jwk.kid };

    const valid = await signWith({ ...baseClaims(tokenId), iat: now, exp: now + 600 }, header, privateKey);
    const expired = await signWith({ ...baseClaims(tokenId), iat: now - 7200, exp: now - 3600 }, header, privateKey);
    const foreign = await signWith(
      { ...baseClaims(tokenId), iss: "https://evil.example", iat: now, exp: now + 600 },
      header,
      privateKey,
    );
    const wrongAudience = await signWith(
      { ...baseClaims(tokenId), aud: "https://other.example", iat: now, exp: now + 600 },
      header,
      privateKey,
    );
    const b64 = (o: object) => btoa(JSON.stringify(o)).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
    const unsigned =
      `${b64({ alg: "none", typ: "at+jwt" })}.` + `${b64({ ...baseClaims(tokenId), iat: now, exp: now + 600 })}` + `.`;
    // The classic confusion: HMAC keyed with the published public key.
    const publicJwk = (await jwks(env)).keys[0]!;
    const confused = await signWith(
      { ...baseClaims(tokenId), iat: now, exp: now + 600 },
      { alg: "HS256", typ: "at+jwt", kid: jwk.kid },
      new TextEncoder().encode(JSON.stringify(publicJwk)),
    );

    const create = (bearer: string) =>
      call("POST", "/v1/counters", { body: {}, headers: { authorization: `Bearer ${bearer}` } });
    expect((await create(valid)).status).toBe(201);
    for (const bad of [expired, foreign, wrongAudience, unsigned, confused]) {
      const res = await create(bad);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toContain("resource_metadata=");
    }
    expect((await balanceOf(token)).spent_usd).toBe(0.03);
  });

  it("a retry with a refreshed access token and the same Idempotency-Key replays, not charging again", async () => {
    const { token, tokenId } = await buyCredits(1);
    const grant = async () => {
      const { as, client, res } = await accessTokenFor(token, tokenId);
      return oauth.processClientCredentialsResponse(as, client, res);
    };
    const first = await grant();
    const second = await grant();
    expect(second.access_token).not.toBe(first.access_token);
    const create = (bearer: string) =>
      call("POST", "/v1/counters", {
        body: { ttl_seconds: 86400 },
        headers: { authorization: `Bearer ${bearer}`, "Idempotency-Key": "refresh-retry" },
      });
    const a = await create(first.access_token);
    const b = await create(second.access_token);
    expect(b.headers.get("idempotent-replayed")).toBe("true");
    expect((await json(b)).id).toBe((await json(a)).id);
    expect((await balanceOf(token)).spent_usd).toBe(0.001);
  });

  it("publishes the next key during a rotation", async () => {
    const { privateKey } = (await crypto.subtle.generateKey(
      { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
      true,
      ["sign", "verify"],
    )) as CryptoKeyPair;
    const next = { ...(await crypto.subtle.exportKey("jwk", privateKey)), kid: "test-key-2" };
    const set = await jwks({ ...env, OAUTH_NEXT_PRIVATE_JWK: JSON.stringify(next) });
    expect(set.keys.map((k) => k.kid)).toEqual(["test-key-1", "test-key-2"]);
    expect(set.keys.every((k) => k.d === undefined)).toBe(true);
  });
});
