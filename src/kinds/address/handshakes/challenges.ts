/**
 * The challenge protocols, each as its provider documents it. A request is a challenge when it has the protocol's
 * shape; it is then answered here (never buffered), or refused with 403 when it cannot be answered truthfully (the
 * secret it needs was not given, a token or signature is wrong), so the provider reports the failure rather than a
 * silent mismatch.
 *
 * - Microsoft Graph: any request with `?validationToken=…` → 200 `text/plain`, the token decoded.
 * - Meta (Facebook, Instagram, WhatsApp): `GET ?hub.mode=subscribe&hub.challenge=…&hub.verify_token=…` → the
 *   challenge, when the verify token is the configured one.
 * - X (Twitter) CRC: `GET ?crc_token=…` → `{"response_token": "sha256=" + base64(HMAC-SHA256(consumer secret,
 *   crc_token))}`.
 * - Dropbox: `GET ?challenge=…` → the challenge, `text/plain` with `X-Content-Type-Options: nosniff`.
 * - Twitch EventSub: `Twitch-Eventsub-Message-Type: webhook_callback_verification`, signed (see
 *   ../captures/signatures.ts) → the body's `challenge`, raw, `text/plain`.
 * - Slack: a JSON body `{"type": "url_verification", "challenge": …}` → `{"challenge": …}` (its X-Slack-Signature
 *   checked when the signing secret was given).
 * - Zoom: a JSON body `{"event": "endpoint.url_validation", "payload": {"plainToken": …}}` → `{"plainToken": …,
 *   "encryptedToken": hex(HMAC-SHA256(secret token, plainToken))}`.
 */
import { AppError } from "../../../http/errors";
import { digestsEqual } from "../../../auth/ids";
import { toBase64, toHex, utf8 } from "../../../bytes";
import { hmacSha256 } from "../../../delivery/signing";
import { type PublicAnswer, type PublicRequest } from "../../../kind/public-face";
import { headerOf, queryOf } from "../../../kind/public-request";
import { verify } from "../captures/signatures";
import type { Protocol, Secrets } from "./schema";

export interface Answered {
  protocol: Protocol;
  answer: PublicAnswer;
}

/** JSON bodies looked into for a Slack or Zoom challenge: theirs are a few hundred bytes. */
const MAX_CHALLENGE_BODY = 64 * 1024;

function jsonBody(request: PublicRequest): Record<string, unknown> | null {
  const body = request.body;
  if (!(body instanceof Uint8Array) || body.length > MAX_CHALLENGE_BODY || body[0] !== 0x7b /* { */) return null;
  try {
    const value: unknown = JSON.parse(new TextDecoder().decode(body));
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const refuse = (detail: string) => new AppError("forbidden", detail);

function needs(secrets: Secrets, field: keyof Secrets, protocol: string): string {
  const value = secrets[field];
  if (value === undefined)
    throw refuse(
      `This is a ${protocol} challenge, and this address was created without \`${field}\`, so it cannot answer it.`,
    );
  return value;
}

const text = (body: string): PublicAnswer => ({ type: "text", body });

async function signed(provider: "slack" | "twitch" | "zoom", secret: string, request: PublicRequest): Promise<void> {
  const body = request.body instanceof Uint8Array ? request.body : new Uint8Array(0);
  const verdict = await verify(provider, secret, request.headers, body, request.receivedAt);
  if (!verdict.verified) throw refuse(`The ${provider} challenge's signature does not verify: ${verdict.error}.`);
}

/** The answer to a challenge, or null when the request is none (it is buffered then). */
export async function answerChallenge(secrets: Secrets, request: PublicRequest): Promise<Answered | null> {
  const validationToken = queryOf(request, "validationToken");
  if (validationToken !== undefined) return { protocol: "graph", answer: text(validationToken) };

  const get = request.method === "GET" || request.method === "HEAD";
  if (get && queryOf(request, "hub.mode") === "subscribe" && queryOf(request, "hub.challenge") !== undefined) {
    const expected = needs(secrets, "meta_verify_token", "Meta");
    if (!digestsEqual(queryOf(request, "hub.verify_token") ?? "", expected))
      throw refuse("hub.verify_token is not this address's verify token.");
    return { protocol: "meta", answer: text(queryOf(request, "hub.challenge")!) };
  }
  const crc = get ? queryOf(request, "crc_token") : undefined;
  if (crc !== undefined) {
    const mac = await hmacSha256(utf8(needs(secrets, "twitter_consumer_secret", "X (Twitter) CRC")), "", utf8(crc));
    return { protocol: "twitter", answer: { type: "json", body: { response_token: `sha256=${toBase64(mac)}` } } };
  }
  const dropbox = get ? queryOf(request, "challenge") : undefined;
  if (dropbox !== undefined) return { protocol: "dropbox", answer: text(dropbox) };

  if (headerOf(request, "twitch-eventsub-message-type") === "webhook_callback_verification") {
    await signed("twitch", needs(secrets, "twitch_secret", "Twitch EventSub"), request);
    const challenge = jsonBody(request)?.challenge;
    if (typeof challenge !== "string")
      throw new AppError(
        "validation_failed",
        "A Twitch verification request carries a `challenge` string in its JSON body.",
      );
    return { protocol: "twitch", answer: text(challenge) };
  }

  const body = request.method === "POST" ? jsonBody(request) : null;
  if (body?.type === "url_verification" && typeof body.challenge === "string") {
    if (secrets.slack_signing_secret !== undefined) await signed("slack", secrets.slack_signing_secret, request);
    return { protocol: "slack", answer: { type: "json", body: { challenge: body.challenge } } };
  }
  const plainToken =
    body?.event === "endpoint.url_validation"
      ? (body.payload as { plainToken?: unknown } | undefined)?.plainToken
      : undefined;
  if (typeof plainToken === "string") {
    const secret = needs(secrets, "zoom_secret_token", "Zoom");
    if (headerOf(request, "x-zm-signature") !== null) await signed("zoom", secret, request);
    const mac = await hmacSha256(utf8(secret), "", utf8(plainToken));
    return { protocol: "zoom", answer: { type: "json", body: { plainToken, encryptedToken: toHex(mac) } } };
  }
  return null;
}

/** Which provider signed a buffered request, by the headers it carries, when its secret was given. */
export function signerOf(
  secrets: Secrets,
  request: PublicRequest,
): { provider: "slack" | "twitch" | "zoom"; secret: string } | null {
  const h = request.headers;
  if (h["twitch-eventsub-message-signature"] !== undefined && secrets.twitch_secret)
    return { provider: "twitch", secret: secrets.twitch_secret };
  if (h["x-slack-signature"] !== undefined && secrets.slack_signing_secret)
    return { provider: "slack", secret: secrets.slack_signing_secret };
  if (h["x-zm-signature"] !== undefined && secrets.zoom_secret_token)
    return { provider: "zoom", secret: secrets.zoom_secret_token };
  return null;
}
