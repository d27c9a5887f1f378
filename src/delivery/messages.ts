/** What travels on the DELIVERIES queue: self-contained, so a delivery outlives the resource that sent it. */
export interface WebhookMessage {
  type: "webhook";
  resourceId: string;
  /** Stable across retries: the Standard Webhooks `webhook-id`, and the event's `id`. */
  deliveryId: string;
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | null;
  /** The body is sealed (a released secret): the consumer unseals it just before sending. */
  bodySealed?: boolean;
  /** The resource's `whsec_` secret, sealed (auth/sealing.ts). */
  sealedSecret: string;
}

export type DeliveryMessage = WebhookMessage;

export function isDeliveryMessage(body: unknown): body is DeliveryMessage {
  return typeof body === "object" && body !== null && (body as { type?: unknown }).type === "webhook";
}
