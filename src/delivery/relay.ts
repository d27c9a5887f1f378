/**
 * Relays: a delivery whose target is another resource of the service rather than a URL (a
 * dead-man switch's alert to the owner's notify resource). It is staged, queued, retried and
 * logged like any delivery, so the relaying work and its message commit together and nothing is
 * lost if a process dies; the attempt calls the target's Durable Object instead of fetching, and
 * the target takes each relay id once. A target that has ended stops the retries.
 */
import type { Env } from "../env";
import type { Json } from "../json";
import type { EngineStore } from "../kind/engine";
import { sha256Hex } from "../bytes";
import type { Result } from "../http/errors";
import { ERROR_CODES } from "../http/error-codes";
import { resourceStub } from "../stubs";
import type { AttemptResult, WebhookMessage } from "./messages";

const PREFIX = "zeitvault://resources/";

/** The attempt log's URL of a relay to resource `id`. */
export const relayUrl = (id: string) => `${PREFIX}${id}`;

/**
 * Stages `message` for resource `targetId` in the caller's transaction; `uniqueBy` (what makes this
 * message this message, within the sending resource) gives it its id, so a repeated alarm sends it once.
 */
export function sendRelay(
  store: EngineStore,
  targetId: string,
  eventType: string,
  message: Json,
  uniqueBy: string,
): string {
  return store.send({
    id: `rly_${sha256Hex(`${store.resourceId}\n${uniqueBy}`).slice(0, 32)}`,
    url: relayUrl(targetId),
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(message),
    eventType,
  });
}

export const isRelay = (url: string) => url.startsWith(PREFIX);

export async function attemptRelay(env: Env, message: WebhookMessage): Promise<Omit<AttemptResult, "durationMs">> {
  let result: Result<null>;
  try {
    result = await resourceStub(env, message.url.slice(PREFIX.length)).relay({
      deliveryId: message.deliveryId,
      from: message.resourceId,
      body: message.body ?? "null",
    });
  } catch (err) {
    return {
      outcome: "failed",
      statusCode: null,
      error: `the resource could not be reached: ${err instanceof Error ? err.message : String(err)}`,
      responseExcerpt: null,
    };
  }
  if (result.ok) return { outcome: "delivered", statusCode: 200, error: null, responseExcerpt: null };
  const { code, detail } = result.error;
  // Gone, or of a kind that takes no relays: no retry can change that.
  const final = code === "not_found" || code === "resource_expired" || code === "resource_cancelled";
  return {
    outcome: final ? "aborted" : "failed",
    statusCode: ERROR_CODES[code][0],
    error: detail,
    responseExcerpt: null,
  };
}
