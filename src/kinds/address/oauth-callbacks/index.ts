/**
 * oauth-callbacks: an OAuth redirect_uri for agents (Nango). The agent registers the request
 * (provider endpoints, client, scope); the service makes the state and the PKCE pair, and the
 * authorize_url to send a person to. The callback checks the state, exchanges the code at the
 * token endpoint server-side (client secret and verifier kept sealed), and keeps the tokens
 * sealed for the agent, who long-polls for them; the person sees a page, never the tokens.
 */
import { randomId } from "../../../auth/ids";
import { base64url } from "jose";
import { sha256 } from "@noble/hashes/sha2";
import { utf8 } from "../../../bytes";
import { AppError } from "../../../http/errors";
import { noInput } from "../../../openapi/schemas";
import { kindOf } from "../../../kind/kind";
import { oauthFace } from "./public";
import { result, saveSecrets, secretsOf, statusOf, TABLES, type Secrets } from "./store";
import { oauthCreate, oauthInfo, oauthResult, resultInput, type OauthConfig } from "./schema";

const OP_PRICE = 100; // µUSD, $0.0001 per call

const kind = kindOf<OauthConfig>();

function authorizeUrl(config: OauthConfig, redirectUri: string, challenge: string | null): string | null {
  if (!config.authorization_endpoint || !config.client_id) return null;
  const url = new URL(config.authorization_endpoint);
  const params: Record<string, string | null> = {
    response_type: "code",
    client_id: config.client_id,
    redirect_uri: redirectUri,
    scope: config.scope,
    state: config.state,
    code_challenge: challenge,
    code_challenge_method: challenge ? "S256" : null,
    ...config.authorize_params,
  };
  for (const [k, v] of Object.entries(params)) if (v !== null) url.searchParams.set(k, v);
  return url.href;
}

export const oauthCallbacks = kind.define({
  kind: "oauth-callbacks",
  family: "address",
  title: "OAuth callback",
  summary:
    "A redirect_uri for an OAuth authorization: the state checked, the code exchanged server-side with " +
    "PKCE (S256) and a sealed client secret, the tokens kept sealed for the agent to long-poll; the person " +
    "sees a page saying they can close the tab.",
  createSchema: oauthCreate,
  example: {
    authorization_endpoint: "https://example.com/oauth/authorize",
    token_endpoint: "https://example.com/oauth/token",
    client_id: "zeitvault-agent",
    client_secret: "example-client-secret",
    scope: "openid profile",
    authorize_params: { prompt: "consent" },
  },
  targetFields: ["authorization_endpoint", "token_endpoint"],
  migrations: [{ sql: TABLES }],
  dayPriceMicro: 1000,
  defaultTtlSeconds: 86400,
  maxTtlSeconds: 30 * 86400,
  checkCreate: (config) => {
    if ((config.token_endpoint || config.authorization_endpoint) && !config.client_id) {
      throw new AppError("validation_failed", "client_id: needed with an authorization or token endpoint.", {
        errors: [{ path: "client_id", message: "needed with an authorization or token endpoint" }],
      });
    }
  },
  // The secret and the PKCE verifier are kept sealed; the record shows the state the callback must bring.
  sealCreate: async (_env, config) => {
    const verifier = config.pkce ? randomId("") + randomId("") : null;
    const secrets: Secrets = { client_secret: config.client_secret, code_verifier: verifier };
    return {
      config: { ...config, client_secret: config.client_secret && "(sealed)", state: config.state ?? randomId("st_") },
      sealed: secrets,
    };
  },
  init: (store, _config, sealed) => {
    const secrets = sealed as Secrets;
    saveSecrets(store, secrets, secrets.code_verifier ? base64url.encode(sha256(utf8(secrets.code_verifier))) : null);
  },
  usage: (store) => ({ completed: statusOf(store.sql) === "pending" ? 0 : 1 }),
  status: (store) => ({ status: statusOf(store.sql) }),
  exportData: (store) => ({ status: statusOf(store.sql), result: result(store) }),
  public: oauthFace,
  ops: [
    kind.op({
      name: "info",
      method: "get",
      path: "",
      summary: "The redirect_uri to register, the authorize_url to send the person to, the state and PKCE challenge",
      priceMicro: OP_PRICE,
      input: noInput,
      output: oauthInfo,
      run: (store, config) => {
        const s = secretsOf(store.env, store.sql);
        return {
          redirect_uri: s.redirect_uri,
          authorize_url: authorizeUrl(config, s.redirect_uri, s.code_challenge),
          state: config.state!,
          code_challenge: s.code_challenge,
          code_challenge_method: s.code_challenge ? ("S256" as const) : null,
          status: statusOf(store.sql),
        };
      },
    }),
    kind.op({
      name: "result",
      method: "get",
      path: "/result",
      summary: "The tokens (or the code, or the provider's error) once the callback came (long-poll with wait_seconds)",
      priceMicro: OP_PRICE,
      input: resultInput,
      output: oauthResult,
      example: { input: { wait_seconds: 0 } },
      ready: (store) => statusOf(store.sql) !== "pending",
      run: (store) => result(store),
    }),
  ],
});
