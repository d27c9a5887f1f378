/**
 * Request and response shapes of oauth-callbacks: a `redirect_uri` an agent hands to an OAuth
 * provider (Nango's callback). The person authorizes at the provider; the callback lands here,
 * its `state` is checked, and the code is exchanged server-side (PKCE S256, client secret kept
 * sealed) so the agent gets tokens without ever handling the code.
 */
import { z } from "@hono/zod-openapi";
import { requestFields } from "../../../delivery/outbound";
import { jsonValue, singleLine } from "../../../openapi/schemas";

export const STATUSES = ["pending", "completed", "error"] as const;
/** The largest token answer taken from a provider. */
export const MAX_TOKEN_RESPONSE_BYTES = 64 * 1024;

const urlSafe = (min: number, max: number) =>
  z
    .string()
    .min(min)
    .max(max)
    .regex(/^[A-Za-z0-9._~-]+$/, "must be URL-safe characters (A–Z a–z 0–9 . _ ~ -)");

export const oauthCreate = z
  .object({
    authorization_endpoint: requestFields.url
      .nullable()
      .default(null)
      .describe(
        "The provider's authorization endpoint: the answer's `authorize_url` is built from it (client_id, " +
          "redirect_uri, scope, state, PKCE).",
      ),
    token_endpoint: requestFields.url
      .nullable()
      .default(null)
      .describe(
        "The provider's token endpoint: the code is exchanged here, server-side, and the agent gets the " +
          "tokens, never the code. Null: the agent gets the code.",
      ),
    client_id: singleLine(512).min(1).nullable().default(null),
    client_secret: z
      .string()
      .min(1)
      .max(1024)
      .regex(/^[\u0020-\u007e]+$/, "must be printable ASCII")
      .nullable()
      .default(null)
      .describe('Kept encrypted; used only for the exchange; the record shows "(sealed)".'),
    token_auth: z
      .enum(["client_secret_basic", "client_secret_post", "none"])
      .default("client_secret_basic")
      .describe("How the client authenticates at the token endpoint (RFC 6749 §2.3)."),
    scope: singleLine(1000).nullable().default(null),
    state: urlSafe(16, 512)
      .nullable()
      .default(null)
      .describe("The state the callback must bring back; null: the service makes an unguessable one."),
    pkce: z
      .boolean()
      .default(true)
      .describe(
        "PKCE with S256 (RFC 7636): the verifier is made and kept sealed here, the challenge goes in `authorize_url`.",
      ),
    authorize_params: z
      .record(urlSafe(1, 64), singleLine(1000))
      .refine((p) => Object.keys(p).length <= 10, "at most 10 parameters")
      .default({})
      .describe("More parameters for authorize_url (prompt, access_type, …)."),
  })
  .strict();
export type OauthConfig = z.infer<typeof oauthCreate>;

export const oauthInfo = z.object({
  redirect_uri: z.string().describe("Register this at the provider."),
  authorize_url: z
    .string()
    .nullable()
    .describe("Where to send the person (with authorization_endpoint and client_id)."),
  state: z.string(),
  code_challenge: z
    .string()
    .nullable()
    .describe("The PKCE S256 challenge, for building the authorization request yourself."),
  code_challenge_method: z.literal("S256").nullable(),
  status: z.enum(STATUSES),
});

export const tokens = z
  .record(z.string(), jsonValue)
  .describe(
    "The token endpoint's answer as it gave it (access_token, token_type, expires_in, refresh_token, " +
      "id_token, scope, …).",
  );

export const oauthResult = z.object({
  status: z
    .enum(STATUSES)
    .describe(
      "`pending` until the callback comes; `completed` with tokens (or the code, without a token " +
        "endpoint); `error` with the provider's error.",
    ),
  tokens: tokens.nullable(),
  code: z.string().nullable().describe("Only without a token_endpoint."),
  error: z.string().nullable(),
  error_description: z.string().nullable(),
  completed_at: z.string().nullable(),
});

export const resultInput = z.object({
  wait_seconds: z.coerce
    .number()
    .int()
    .min(0)
    .max(30)
    .default(0)
    .describe("Wait up to this long for the callback (long-poll)."),
});
