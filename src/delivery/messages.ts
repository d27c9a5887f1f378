/**
 * What travels on the DELIVERIES queue. A message names its delivery (as Svix's do) and
 * carries what the consumer needs to make the call without asking the resource first, so
 * a delivery outlives the resource that sent it (its `resource.expired` event). A text body
 * rides along; a body stored in R2 travels as its key, so one object serves every
 * destination it is fanned out to and a retry re-reads it rather than re-queueing it.
 */
export interface WebhookMessage {
  type: "webhook";
  resourceId: string;
  /** Stable across retries and re-sends: the Standard Webhooks `webhook-id`, and the event's `id`. */
  deliveryId: string;
  /**
   * Which send of this delivery the message is (1 for the first; the resource's alarm sends
   * again when a message went missing). An older message stops retrying once a newer one exists.
   * Absent on messages queued before re-sends existed.
   */
  send?: number;
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | null;
  /** The body is the R2 object with this key (below the resource's prefix); `body` is then null. */
  bodyKey?: string;
  /** The body is sealed (a released secret): the consumer unseals it just before sending. */
  bodySealed?: boolean;
  /** The body is the whole request sealed (secret-requests.ts); `url` is then the redacted one the log shows. */
  requestSealed?: boolean;
  /** The resource's `whsec_` secret, sealed (auth/sealing.ts). */
  sealedSecret: string;
  /** The delivery's own retry schedule (seconds before each retry), when it has one. */
  retryDelays?: number[];
  /**
   * The resource is in a sandbox whose deliveries go to its log (docs/api.md#sandboxes): the request is written there
   * in place of being sent (sandbox-log.ts), with its event type for the log to show.
   */
  logTo?: { sandboxId: string; eventType: string };
}

export type DeliveryMessage = WebhookMessage;

/** Sent by the readiness report to prove the queue takes messages; acknowledged unread. */
export interface ProbeMessage {
  type: "probe";
}

export function isProbeMessage(body: unknown): body is ProbeMessage {
  return typeof body === "object" && body !== null && (body as { type?: unknown }).type === "probe";
}

export function isDeliveryMessage(body: unknown): body is DeliveryMessage {
  return typeof body === "object" && body !== null && (body as { type?: unknown }).type === "webhook";
}

/** Cloudflare Queues take messages up to 128 KB; the envelope of the queue itself needs a little of that. */
export const MAX_MESSAGE_BYTES = 120 * 1024;
/** And batches (sendBatch) up to 100 messages and 256 KB in all. */
const MAX_BATCH_MESSAGES = 100;
const MAX_BATCH_BYTES = 250 * 1024;

/** Messages in the groups one sendBatch call takes each, keeping their order. */
export function batches<T>(items: { message: T; bytes: number }[]): T[][] {
  const out: T[][] = [];
  let current: T[] = [];
  let size = 0;
  for (const { message, bytes } of items) {
    if (current.length && (current.length >= MAX_BATCH_MESSAGES || size + bytes > MAX_BATCH_BYTES)) {
      out.push(current);
      current = [];
      size = 0;
    }
    current.push(message);
    size += bytes;
  }
  if (current.length) out.push(current);
  return out;
}

/** How one attempt went, as the consumer reports it to the resource (delivery/attempt.ts makes it). */
export interface AttemptResult {
  outcome: "delivered" | "failed" | "aborted";
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  responseExcerpt: string | null;
  /** The request went to its sandbox's delivery log, as entry number `logged`, in place of its target. */
  logged?: number;
}
