/**
 * OAuth 2.0 client credentials (RFC 6749 §4.4) exchanging a credit token for
 * an access token, and the discovery documents: authorization server metadata
 * (RFC 8414), protected resource metadata (RFC 9728) and the JWKS (RFC 7517).
 * The token endpoint answers errors in RFC 6749 §5.2 form, not problem+json:
 * OAuth clients parse that shape.
 */
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { serviceUrls } from "../http/urls";
import { accountStub } from "../stubs";
import { jsonResponse } from "../openapi/responses";
import { ACCESS_TOKEN_SECONDS, issueAccessToken, scopeOf } from "./access-tokens";
import { jwks } from "./signing-keys";
import { hashToken, parseCreditToken } from "./tokens";

type OAuthErrorCode = "invalid_request" | "invalid_client" | "unsupported_grant_type" | "invalid_scope";

const tokenRequest = z
  .object({
    grant_type: z.string().describe("`client_credentials`"),
    client_secret: z.string().optional().describe("A credit token (zv_…). Or send it as the password of HTTP Basic."),
    client_id: z.string().optional().describe("Optional: the credit token's id."),
    scope: z.string().optional().describe("`<service>.write` (the default)."),
  })
  .openapi("TokenRequest");

const tokenResponse = z
  .object({ access_token: z.string(), token_type: z.literal("Bearer"), expires_in: z.int(), scope: z.string() })
  .openapi("TokenResponse");

const oauthError = z.object({ error: z.string(), error_description: z.string() }).openapi("OAuthError");

function fail(c: Context<AppEnv>, error: OAuthErrorCode, description: string): Response {
  const headers: Record<string, string> = { "Content-Type": "application/json", "Cache-Control": "no-store" };
  if (error === "invalid_client") headers["WWW-Authenticate"] = 'Basic realm="oauth"';
  return new Response(JSON.stringify({ error, error_description: description }), {
    status: error === "invalid_client" ? 401 : 400,
    headers,
  });
}

/** client_secret_post or client_secret_basic. */
function clientCredentials(c: Context<AppEnv>, form: Record<string, string>): { id?: string; secret?: string } {
  const basic = /^Basic\s+(\S+)$/i.exec(c.req.header("Authorization") ?? "");
  if (!basic?.[1]) return { id: form.client_id, secret: form.client_secret };
  try {
    const decoded = atob(basic[1]);
    const colon = decoded.indexOf(":");
    if (colon < 0) return {};
    return {
      id: decodeURIComponent(decoded.slice(0, colon)) || undefined,
      secret: decodeURIComponent(decoded.slice(colon + 1)),
    };
  } catch {
    return {}; // malformed: no credentials, so invalid_client
  }
}

async function readForm(c: Context<AppEnv>): Promise<Record<string, string> | null> {
  if (!(c.req.header("Content-Type") ?? "").startsWith("application/x-www-form-urlencoded")) return null;
  const body = await c.req.parseBody();
  return Object.fromEntries(Object.entries(body).filter((e): e is [string, string] => typeof e[1] === "string"));
}

async function token(c: Context<AppEnv>): Promise<Response> {
  const form = await readForm(c);
  if (!form) return fail(c, "invalid_request", "Send the request as application/x-www-form-urlencoded.");
  if (!form.grant_type) return fail(c, "invalid_request", "grant_type is required.");
  if (form.grant_type !== "client_credentials")
    return fail(c, "unsupported_grant_type", "Only client_credentials is supported.");
  const client = clientCredentials(c, form);
  const parts = client.secret ? parseCreditToken(client.secret) : null;
  if (!client.secret || !parts) return fail(c, "invalid_client", "client_secret must be a credit token (zv_…).");
  if (client.id && client.id !== parts.tokenId)
    return fail(c, "invalid_client", "client_id does not match the credit token.");
  const scope = scopeOf(c.env);
  if (form.scope !== undefined && form.scope.split(" ").some((s) => s !== scope))
    return fail(c, "invalid_scope", `The only scope is ${scope}.`);
  const known = await accountStub(c.env, parts.accountId).authenticate({
    tokenId: parts.tokenId,
    tokenHash: hashToken(client.secret),
  });
  if (!known.ok) return fail(c, "invalid_client", "The credit token is not known or has expired.");

  const accessToken = await issueAccessToken(c.env, serviceUrls(c), parts.tokenId);
  c.header("Cache-Control", "no-store");
  return c.json(
    { access_token: accessToken, token_type: "Bearer" as const, expires_in: ACCESS_TOKEN_SECONDS, scope },
    200,
  );
}

export function registerOAuthRoutes(app: OpenAPIHono<AppEnv>): void {
  // Documented from the schemas above but served by a plain handler: OAuth clients expect RFC 6749
  // errors for a bad form, not the API's validation problems.
  app.openAPIRegistry.registerPath({
    method: "post",
    path: "/oauth/token",
    tags: ["OAuth"],
    operationId: "oauth_token",
    security: [],
    summary: "Exchange a credit token for an access token (client credentials)",
    description:
      "An RS256 JWT (`typ: at+jwt`) valid 3600 s, verifiable against the JWKS. It is accepted wherever a " +
      "credit token is, and charges that token.",
    request: {
      body: {
        required: true,
        content: {
          "application/x-www-form-urlencoded": {
            schema: tokenRequest,
            example: {
              grant_type: "client_credentials",
              client_secret: "zv_4k2R8h1Zq0Wm3n5T7v9x1y0a1b2c3d4e5f6g7h8i9j0kLmNoPq",
              scope: "zeitvault.write",
            },
          },
        },
      },
    },
    responses: {
      200: jsonResponse("The access token.", tokenResponse),
      400: jsonResponse("`invalid_request`, `unsupported_grant_type`, `invalid_scope` (RFC 6749 §5.2).", oauthError),
      401: jsonResponse("`invalid_client`.", oauthError),
    },
  });
  app.post("/oauth/token", token);

  const wellKnown = (path: string, build: (c: Context<AppEnv>) => Promise<object> | object) =>
    app.get(`/.well-known/${path}`, async (c) => {
      c.header("Cache-Control", "public, max-age=300");
      return c.json(await build(c));
    });

  wellKnown("oauth-authorization-server", (c) => {
    const { baseUrl, authUrl } = serviceUrls(c);
    return {
      issuer: authUrl,
      token_endpoint: `${baseUrl}/oauth/token`,
      jwks_uri: `${authUrl}/.well-known/jwks.json`,
      grant_types_supported: ["client_credentials"],
      token_endpoint_auth_methods_supported: ["client_secret_post", "client_secret_basic"],
      scopes_supported: [scopeOf(c.env)],
      response_types_supported: [],
      service_documentation: `${baseUrl}/docs`,
    };
  });
  wellKnown("oauth-protected-resource", (c) => {
    const { baseUrl, authUrl } = serviceUrls(c);
    return {
      resource: baseUrl,
      authorization_servers: [authUrl],
      jwks_uri: `${authUrl}/.well-known/jwks.json`,
      scopes_supported: [scopeOf(c.env)],
      bearer_methods_supported: ["header"],
      resource_name: c.env.SERVICE_NAME,
      resource_documentation: `${baseUrl}/docs`,
    };
  });
  wellKnown("jwks.json", (c) => jwks(c.env));
}
