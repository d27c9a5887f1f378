/**
 * The send of a sandbox whose deliveries go to its log (docs/api.md#sandboxes): the request, built and signed as it
 * would have been sent, is written to the sandbox's delivery log instead of leaving the service. Only the send is
 * replaced: the outbox, the queue, the egress guard and the attempt log are the same ones, so the resource sees its
 * delivery made (and settled) as a real one. The log never holds a secret: header values that may be credentials are
 * masked, and a secret body (a released secret, a whole secret request) keeps neither its bytes nor a digest.
 */
import type { Env } from "../env";
import { sandboxStub } from "../stubs";
import type { LoggedRequest } from "../rpc/sandbox";
import { MAX_LOGGED_BODY_BYTES } from "../sandbox/limits";
import { toHex, utf8 } from "../bytes";
import type { AttemptResult, WebhookMessage } from "./messages";

/** Header names whose values may be credentials: shown masked. */
const SECRET_HEADER = /authorization|cookie|token|secret|key|pass|session|credential|auth|signature-input/i;
const MASK = "[masked]";

export type LoggedBody =
  | { kind: "none" }
  | { kind: "text"; text: string }
  | { kind: "stored"; bytes: () => Promise<ReadableStream<Uint8Array>> }
  | { kind: "secret" };

function maskHeaders(headers: Record<string, string>, all: boolean): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name, all || SECRET_HEADER.test(name) ? MASK : value]),
  );
}

async function bodyFields(
  body: LoggedBody,
): Promise<Pick<LoggedRequest, "body" | "body_bytes" | "body_sha256" | "body_withheld">> {
  switch (body.kind) {
    case "none":
      return { body: null, body_bytes: null, body_sha256: null, body_withheld: false };
    case "secret":
      return { body: null, body_bytes: null, body_sha256: null, body_withheld: true };
    case "text": {
      const bytes = utf8(body.text);
      return {
        body: bytes.length <= MAX_LOGGED_BODY_BYTES ? body.text : null,
        body_bytes: bytes.length,
        body_sha256: toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))),
        body_withheld: false,
      };
    }
    case "stored": {
      // Streamed through the digest: a stored body may be larger than memory allows.
      const digest = new crypto.DigestStream("SHA-256");
      let size = 0;
      await (
        await body.bytes()
      )
        .pipeThrough(
          new TransformStream<Uint8Array, Uint8Array>({
            transform(chunk, controller) {
              size += chunk.length;
              controller.enqueue(chunk);
            },
          }),
        )
        .pipeTo(digest);
      return {
        body: null,
        body_bytes: size,
        body_sha256: toHex(new Uint8Array(await digest.digest)),
        body_withheld: false,
      };
    }
  }
}

/**
 * Writes the request to its sandbox's log in place of sending it. `maskAll`: the whole request is a secret (its
 * headers carry credentials by design). A sandbox that has ended takes nothing: the delivery is aborted.
 */
export async function logToSandbox(
  env: Env,
  message: WebhookMessage & { logTo: NonNullable<WebhookMessage["logTo"]> },
  request: { headers: Record<string, string>; body: LoggedBody; maskAll: boolean },
): Promise<Omit<AttemptResult, "durationMs">> {
  const { sandboxId, eventType } = message.logTo;
  const logged = await sandboxStub(env, sandboxId).logDelivery({
    resource_id: message.resourceId,
    delivery_id: message.deliveryId,
    event_type: eventType,
    method: message.method,
    url: message.url,
    headers: maskHeaders(request.headers, request.maskAll),
    ...(await bodyFields(request.body)),
  });
  if (!logged.ok)
    return {
      outcome: "aborted",
      statusCode: null,
      error: `not logged: ${logged.error.detail}`,
      responseExcerpt: null,
    };
  return {
    outcome: "delivered",
    statusCode: null,
    error: null,
    responseExcerpt: `written to sandbox ${sandboxId}'s delivery log as entry ${logged.value.seq}, not sent`,
    logged: logged.value.seq,
  };
}
