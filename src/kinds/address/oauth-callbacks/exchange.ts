/**
 * The code exchange (RFC 6749 §4.1.3, with RFC 7636's code_verifier): a form POST to the token
 * endpoint through the egress guard, the client authenticated as configured. Whatever the
 * provider answers is an outcome, never a failure of the callback: tokens, or its error.
 */
import { toBase64, utf8 } from "../../../bytes";
import { fetchGuarded } from "../../../delivery/fetch-guarded";
import { AppError } from "../../../http/errors";
import type { JsonObject } from "../../../json";
import type { PrepareContext } from "../../../kind/kind";
import type { Outcome, Secrets } from "./store";
import { MAX_TOKEN_RESPONSE_BYTES, type OauthConfig } from "./schema";

/** RFC 6749 §2.3.1: client id and secret are form-encoded before they are joined for Basic. */
const basic = (id: string, secret: string) =>
  `Basic ${toBase64(utf8(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`))}`;

export async function exchange(
  ctx: PrepareContext,
  config: OauthConfig,
  secrets: Secrets & { redirect_uri: string },
  code: string,
): Promise<Outcome> {
  const form = new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: secrets.redirect_uri });
  if (secrets.code_verifier) form.set("code_verifier", secrets.code_verifier);
  const headers: Record<string, string> = {
    "content-type": "application/x-www-form-urlencoded",
    accept: "application/json",
  };
  if (config.token_auth === "client_secret_basic" && secrets.client_secret)
    headers.authorization = basic(config.client_id!, secrets.client_secret);
  else {
    form.set("client_id", config.client_id!);
    if (config.token_auth === "client_secret_post" && secrets.client_secret)
      form.set("client_secret", secrets.client_secret);
  }
  let answer: { status: number; body: Uint8Array };
  try {
    answer = await fetchGuarded(ctx.env, config.token_endpoint!, {
      method: "POST",
      headers,
      body: form.toString(),
      maxBytes: MAX_TOKEN_RESPONSE_BYTES,
      field: "token_endpoint",
    });
  } catch (err) {
    return {
      error: "token_endpoint_unreachable",
      error_description: err instanceof AppError ? err.detail : "the token endpoint could not be reached",
    };
  }
  let json: JsonObject = {};
  try {
    json = JSON.parse(new TextDecoder().decode(answer.body)) as JsonObject;
  } catch {
    // Not JSON: reported by status below.
  }
  if (answer.status === 200 && typeof json.access_token === "string") return { tokens: json };
  const text = (v: unknown) => (typeof v === "string" ? v.slice(0, 500) : null);
  return {
    error: text(json.error) ?? `token_endpoint_http_${answer.status}`,
    error_description: text(json.error_description),
  };
}
