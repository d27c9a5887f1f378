/**
 * One delivery attempt: signed POST, 15 s timeout, redirects not followed (a
 * redirect could point anywhere, past the egress guard), at most 4 KiB of the
 * answer kept for the attempt log.
 */
import type { Env } from "../env";
import { unseal } from "../auth/sealing";
import { AppError } from "../http/errors";
import { allowsPrivateTargets, checkEgressUrl } from "./egress-guard";
import { signatureHeaders } from "./signing";
import { readCapped } from "./fetch-guarded";
import type { WebhookMessage } from "./messages";

const TIMEOUT_MS = 15_000;
const EXCERPT_BYTES = 4096;

export interface AttemptResult {
  outcome: "delivered" | "failed" | "aborted";
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  responseExcerpt: string | null;
}

async function excerpt(res: Response): Promise<string> {
  return new TextDecoder().decode((await readCapped(res.body, EXCERPT_BYTES)).bytes);
}

export async function attemptDelivery(env: Env, message: WebhookMessage): Promise<AttemptResult> {
  const started = Date.now();
  const done = (r: Omit<AttemptResult, "durationMs">): AttemptResult => ({ ...r, durationMs: Date.now() - started });
  let url: URL;
  let secret: string;
  let body = message.body;
  try {
    url = checkEgressUrl(message.url, allowsPrivateTargets(env.ALLOW_PRIVATE_TARGETS));
    secret = await unseal(env, message.sealedSecret);
    if (message.bodySealed && body !== null) body = await unseal(env, body);
  } catch (err) {
    // Retrying cannot change a refused target or an unreadable secret: stop at once.
    return done({ outcome: "aborted", statusCode: null, error: `not sent: ${err instanceof AppError ? err.detail : "a sealed secret could not be read"}`, responseExcerpt: null });
  }
  try {
    const res = await fetch(url, {
      method: message.method,
      redirect: "manual",
      signal: AbortSignal.timeout(TIMEOUT_MS),
      headers: {
        "user-agent": `${env.SERVICE_NAME}-webhooks/1.0`,
        ...message.headers,
        // Last, so a configured header cannot forge the signature.
        ...(await signatureHeaders(secret, message.deliveryId, body ?? "")),
      },
      body: message.method === "GET" ? undefined : body,
    });
    const text = await excerpt(res);
    if (res.headers.get("webhook-delivery")?.toLowerCase() === "abort") {
      return done({ outcome: "aborted", statusCode: res.status, error: "the receiver asked to stop (webhook-delivery: abort)", responseExcerpt: text });
    }
    const ok = res.status >= 200 && res.status < 300;
    return done({ outcome: ok ? "delivered" : "failed", statusCode: res.status, error: ok ? null : `HTTP ${res.status}`, responseExcerpt: text });
  } catch (err) {
    const timeout = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
    return done({ outcome: "failed", statusCode: null, error: timeout ? "timed out after 15 s" : err instanceof Error ? err.message : String(err), responseExcerpt: null });
  }
}
