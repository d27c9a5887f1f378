/**
 * oauth-callbacks, per issue 14 and docs/kinds.md: the authorize_url with state and a PKCE S256
 * challenge; a callback with the wrong state changes nothing; the right one has the code
 * exchanged at the token endpoint (a local receiver standing in; the request as RFC 6749 and
 * 7636 specify it: grant, code, redirect_uri, verifier, client authentication) and the tokens
 * kept sealed for the agent's long-poll; the person's page never shows a token or the code;
 * the provider's errors are results too. The whole flow against a real OpenID provider in a
 * browser: test/node/pages.test.ts.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { base64url } from "jose";
import { describe, expect, it } from "vitest";
import { oauthCallbacks } from "../../src/kinds/address/oauth-callbacks";
import { buyCredits, call, createResource, opsOn, publicUrl, received } from "../harness";

const receiver = env.TEST_RECEIVER_URL;
const unique = () => crypto.randomUUID().slice(0, 8);
const browser = { accept: "text/html" };

async function tokenEndpoint(answer: Record<string, unknown>, status = 200) {
  const name = unique();
  await fetch(`${receiver}/_content/${name}`, {
    method: "PUT",
    body: JSON.stringify(answer),
    headers: { "content-type": "application/json", "x-status": String(status) },
  });
  return { name, url: `${receiver}/content/${name}` };
}

async function callback(extra: Record<string, unknown> = {}) {
  const { token } = await buyCredits(1);
  const created = await createResource("oauth-callbacks", token, {
    authorization_endpoint: "https://idp.example.com/authorize",
    client_id: "agent app",
    client_secret: "s3cret:with/odd&chars",
    scope: "openid email",
    ...extra,
  });
  const address = new URL(publicUrl(created.record)).pathname;
  const ops = opsOn(oauthCallbacks, created.id, created.mgmt, token);
  const info = await ops.ok("info", "");
  const hit = (query: Record<string, string>) =>
    call("GET", `${address}?${new URLSearchParams(query)}`, { headers: browser });
  return { ...created, ...ops, info, address, hit };
}

describe("oauth-callbacks", () => {
  it("exchanges the code server-side with PKCE, client secret; the agent gets tokens, the person a page", async () => {
    const tokens = {
      access_token: "at-SECRET-123",
      token_type: "Bearer",
      expires_in: 3600,
      refresh_token: "rt-SECRET-456",
      scope: "openid email",
    };
    const endpoint = await tokenEndpoint(tokens);
    const c = await callback({ token_endpoint: endpoint.url, authorize_params: { prompt: "consent" } });
    expect(c.record.config).toMatchObject({ client_secret: "(sealed)" });
    const authorize = new URL(c.info.authorize_url!);
    expect(Object.fromEntries(authorize.searchParams)).toEqual({
      response_type: "code",
      client_id: "agent app",
      redirect_uri: c.info.redirect_uri,
      scope: "openid email",
      state: c.info.state,
      code_challenge: c.info.code_challenge,
      code_challenge_method: "S256",
      prompt: "consent",
    });
    expect(c.info.redirect_uri).toBe(publicUrl(c.record));

    expect((await c.hit({ code: "stolen", state: "st_not-the-right-one" })).status).toBe(400);
    expect((await c.hit({ code: "stolen" })).status).toBe(400);
    expect((await c.hit({ code: "x\u0001y", state: c.info.state })).status).toBe(400);
    expect((await c.ok("result", "/result")).status).toBe("pending");

    const waiting = c.ok("result", "/result?wait_seconds=10");
    const page = await c.hit({ code: "the-code-789", state: c.info.state });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("You can close this tab");
    for (const secret of ["at-SECRET-123", "rt-SECRET-456", "the-code-789"]) expect(html).not.toContain(secret);
    expect(await waiting).toMatchObject({ status: "completed", tokens, code: null, error: null });

    const [sent] = await received(endpoint.name, 1);
    const form = Object.fromEntries(new URLSearchParams(sent!.body));
    expect(form).toEqual({
      grant_type: "authorization_code",
      code: "the-code-789",
      redirect_uri: c.info.redirect_uri,
      code_verifier: expect.any(String),
    });
    const challenge = base64url.encode(
      new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(form.code_verifier))),
    );
    expect(challenge).toBe(c.info.code_challenge);
    expect(sent!.headers.authorization).toBe(
      `Basic ${btoa(`${encodeURIComponent("agent app")}:${encodeURIComponent("s3cret:with/odd&chars")}`)}`,
    );
    expect(sent!.headers["content-type"]).toBe("application/x-www-form-urlencoded");

    const again = await c.hit({ code: "the-code-789", state: c.info.state });
    expect(again.status).toBe(409);
    expect(await again.text()).toContain("already completed");

    const stored = await runInDurableObject(env.RESOURCES.get(env.RESOURCES.idFromName(c.id)), (_o, state) => {
      const sql = state.storage.sql;
      return sql
        .exec<{ name: string }>(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'",
        )
        .toArray()
        .map((t) => JSON.stringify(sql.exec(`SELECT * FROM "${t.name}"`).toArray()))
        .join("\n");
    });
    expect(stored).toContain("oauth-callbacks");
    for (const secret of ["at-SECRET-123", "rt-SECRET-456", "s3cret:with", form.code_verifier!])
      expect(stored).not.toContain(secret);
  });

  it("sends the client secret in the form if asked (client_secret_post); reports the provider's refusal", async () => {
    const endpoint = await tokenEndpoint({ error: "invalid_grant", error_description: "The code has expired." }, 400);
    const c = await callback({ token_endpoint: endpoint.url, token_auth: "client_secret_post", pkce: false });
    expect(c.info.code_challenge).toBeNull();
    expect(new URL(c.info.authorize_url!).searchParams.has("code_challenge")).toBe(false);
    const page = await c.hit({ code: "old", state: c.info.state });
    expect(await page.text()).toContain("Sign-in did not complete");
    expect(await c.ok("result", "/result")).toMatchObject({
      status: "error",
      error: "invalid_grant",
      error_description: "The code has expired.",
      tokens: null,
    });
    const [sent] = await received(endpoint.name, 1);
    expect(Object.fromEntries(new URLSearchParams(sent!.body))).toEqual({
      grant_type: "authorization_code",
      code: "old",
      redirect_uri: c.info.redirect_uri,
      client_id: "agent app",
      client_secret: "s3cret:with/odd&chars",
    });
    expect(sent!.headers.authorization).toBeUndefined();
  });

  it("keeps the code for the agent without a token endpoint, and takes the provider's error callback", async () => {
    const c = await callback({ state: "my-own-state-0123456789" });
    expect(c.info.state).toBe("my-own-state-0123456789");
    await c.hit({ code: "plain-code", state: "my-own-state-0123456789" });
    expect(await c.ok("result", "/result")).toMatchObject({ status: "completed", code: "plain-code", tokens: null });

    const d = await callback();
    const page = await d.hit({ error: "access_denied", error_description: "The user said no.", state: d.info.state });
    expect(page.status).toBe(200);
    // The person reads the provider's words, not its error code.
    const said = await page.text();
    expect(said).toContain("The provider said: The user said no.");
    expect(said).not.toContain("access_denied");
    expect(await d.ok("result", "/result")).toMatchObject({
      status: "error",
      error: "access_denied",
      error_description: "The user said no.",
    });
  });

  it("refuses a request it could not carry out", async () => {
    const { token } = await buyCredits(1);
    const refused = async (body: Record<string, unknown>, path: RegExp) => {
      const res = await call("POST", "/v1/oauth-callbacks", { body, headers: { authorization: `Bearer ${token}` } });
      const problem = (await res.json()) as { errors?: { path: string }[] };
      expect(res.status, JSON.stringify(problem)).toBe(422);
      expect((problem.errors ?? []).map((e) => e.path).join(" ")).toMatch(path);
    };
    await refused({ token_endpoint: "https://idp.example.com/token" }, /client_id/);
    await refused({ state: "short" }, /state/);
    await refused({ state: "has spaces in it and more" }, /state/);
    await refused({ token_endpoint: "javascript:alert(1)", client_id: "a" }, /token_endpoint/);
    await refused({ client_secret: "tab\there" }, /client_secret/);
    await refused({ authorize_params: { "bad key": "v" } }, /authorize_params/);
  });
});
