/**
 * One delivery attempt: signed, 15 s timeout, redirects not followed (a redirect
 * could point anywhere, past the egress guard), at most 4 KiB of the answer kept
 * for the attempt log. A stored body is read from R2 twice, once to sign its exact
 * bytes and once to send them, so its size never has to fit in memory. Two targets are
 * not HTTP: a relay to another resource (relay.ts) and, inside a sealed request, a mail
 * submission (smtp.ts); both are logged and retried the same way. A sandbox's resource whose sandbox keeps its
 * deliveries in a log is sent the same way up to the send itself, which writes to that log instead (sandbox-log.ts).
 */
import type { Env } from "../env";
import { loadSealing } from "../auth/sealing-loader";
import { AppError } from "../http/errors";
import { allowsPrivateTargets, checkEgressUrl } from "./egress-guard";
import { signatureHeaders } from "./signing";
import { readCapped } from "./fetch-guarded";
import type { AttemptResult, WebhookMessage } from "./messages";
import { attemptRelay, isRelay } from "./relay";
import { isSmtp, sendSmtp, smtpFailure, type SmtpEnvelope } from "./smtp";
import { answerRefusal, awsHeaders, openRequest, type OpenedRequest } from "./secret-requests";
import { logToSandbox } from "./sandbox-log";

const TIMEOUT_MS = 15_000;
const EXCERPT_BYTES = 4096;

async function excerpt(res: Response): Promise<string> {
  return new TextDecoder().decode((await readCapped(res.body, EXCERPT_BYTES)).bytes);
}

/** A stored body's bytes, to sign and then to send (undefined: the object is gone). */
async function storedBody(
  env: Env,
  key: string,
): Promise<{ signed: ReadableStream<Uint8Array>; sent(): Promise<ReadableStream<Uint8Array>> } | undefined> {
  const first = await env.BUCKET.get(key);
  if (!first) return undefined;
  return {
    signed: first.body,
    async sent() {
      // The same version that was signed: an object replaced meanwhile is refused (and retried).
      const again = await env.BUCKET.get(key, { onlyIf: { etagMatches: first.etag } });
      if (!again || !("body" in again)) throw new Error("the stored body changed or went away while it was being sent");
      return again.body;
    },
  };
}

/** A mail submission (a notify mailto:// channel): 5xx replies are final, anything else is retried. */
async function attemptSmtp(env: Env, url: string, envelope: SmtpEnvelope): Promise<Omit<AttemptResult, "durationMs">> {
  try {
    const r = await sendSmtp(env, url, envelope);
    return { outcome: "delivered", statusCode: r.code, error: null, responseExcerpt: r.text.slice(0, EXCERPT_BYTES) };
  } catch (err) {
    const f = smtpFailure(err);
    return {
      outcome: f.permanent ? "aborted" : "failed",
      statusCode: f.statusCode,
      error: f.error,
      responseExcerpt: null,
    };
  }
}

export async function attemptDelivery(env: Env, message: WebhookMessage): Promise<AttemptResult> {
  const started = Date.now();
  const done = (r: Omit<AttemptResult, "durationMs">): AttemptResult => ({ ...r, durationMs: Date.now() - started });
  if (isRelay(message.url)) return done(await attemptRelay(env, message));
  let url: URL;
  let secret: string;
  let body = message.body;
  let headers = message.headers;
  let opened: OpenedRequest | null = null;
  const { unseal } = await loadSealing();
  const logTo = message.logTo;
  try {
    if (message.requestSealed && body !== null) {
      opened = openRequest(env, body);
      ({ body, headers } = opened);
      if (isSmtp(opened.url))
        return done(
          logTo
            ? await logToSandbox(env, { ...message, logTo }, { headers, body: { kind: "secret" }, maskAll: true })
            : await attemptSmtp(env, opened.url, JSON.parse(body ?? "{}") as SmtpEnvelope),
        );
    }
    url = checkEgressUrl(opened?.url ?? message.url, allowsPrivateTargets(env.ALLOW_PRIVATE_TARGETS));
    secret = unseal(env, message.sealedSecret);
    if (message.bodySealed && body !== null) body = unseal(env, body);
  } catch (err) {
    // Retrying cannot change a refused target or an unreadable secret: stop at once.
    return done({
      outcome: "aborted",
      statusCode: null,
      error: `not sent: ${err instanceof AppError ? err.detail : "a sealed secret could not be read"}`,
      responseExcerpt: null,
    });
  }
  try {
    const stored = message.bodyKey ? await storedBody(env, message.bodyKey) : null;
    if (stored === undefined) {
      // Deleted with its resource (or pruned): nothing left that a retry could send.
      return done({
        outcome: "aborted",
        statusCode: null,
        error: "not sent: the stored body is no longer kept",
        responseExcerpt: null,
      });
    }
    const signature = await signatureHeaders(secret, message.deliveryId, stored ? stored.signed : (body ?? ""));
    // An AWS signature is made for this attempt (it is valid for minutes); it covers the headers sent with it.
    if (opened?.aws)
      headers = await awsHeaders(opened.aws, message.method, url.href, { ...headers, ...signature }, body);
    if (logTo) {
      const secret = message.bodySealed || opened !== null;
      return done(
        await logToSandbox(
          env,
          { ...message, logTo },
          {
            headers: { "user-agent": `${env.SERVICE_NAME}-webhooks/1.0`, ...headers, ...signature },
            body: secret
              ? { kind: "secret" }
              : stored
                ? { kind: "stored", bytes: () => stored.sent() }
                : body === null || message.method === "GET"
                  ? { kind: "none" }
                  : { kind: "text", text: body },
            maskAll: opened !== null,
          },
        ),
      );
    }
    const res = await fetch(url, {
      method: message.method,
      redirect: "manual",
      signal: AbortSignal.timeout(TIMEOUT_MS),
      // Last, so a configured header cannot forge the signature.
      headers: { "user-agent": `${env.SERVICE_NAME}-webhooks/1.0`, ...headers, ...signature },
      body: message.method === "GET" ? undefined : stored ? await stored.sent() : body,
    });
    const text = await excerpt(res);
    if (res.headers.get("webhook-delivery")?.toLowerCase() === "abort") {
      return done({
        outcome: "aborted",
        statusCode: res.status,
        error: "the receiver asked to stop (webhook-delivery: abort)",
        responseExcerpt: text,
      });
    }
    const ok = res.status >= 200 && res.status < 300;
    const refused = ok && opened?.okWhen ? answerRefusal(opened.okWhen, text) : null;
    return done({
      outcome: ok && !refused ? "delivered" : "failed",
      statusCode: res.status,
      error: refused ?? (ok ? null : `HTTP ${res.status}`),
      responseExcerpt: text,
    });
  } catch (err) {
    const timeout = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
    return done({
      outcome: "failed",
      statusCode: null,
      error: timeout ? "timed out after 15 s" : err instanceof Error ? err.message : String(err),
      responseExcerpt: null,
    });
  }
}
