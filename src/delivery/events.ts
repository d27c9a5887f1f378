/**
 * Outbound events: the envelope every event shares (docs/api.md#outbound-events-webhooks), the lifecycle
 * events' types, which the OpenAPI document lists under `webhooks` beside the
 * requests kinds send on their own (KindDefinition.sends), and sendEvent, through
 * which a kind raises its own (a dead-man switch going down, a window firing):
 * posted with store.send, so signed, retried and logged like every other request.
 */
import { z } from "@hono/zod-openapi";
import { sha256Hex } from "../bytes";
import type { EngineStore } from "../kind/kind";
import { iso } from "../time";

export const lifecycleEvents = {
  "resource.expiring": z
    .object({
      expires_at: z.string(),
      hours_left: z.union([z.literal(24), z.literal(1)]),
    })
    .describe("Sent 24 hours and 1 hour before expires_at, to notify_url. Extend the resource to keep it."),
  "resource.expired": z
    .object({ expired_at: z.string() })
    .describe("The resource reached expires_at; its data is deleted."),
  "resource.cancelled": z
    .object({ cancelled_at: z.string() })
    .describe("The resource was cancelled; its data is deleted."),
} as const;

export type EventType = keyof typeof lifecycleEvents;

export interface EventEnvelope {
  type: string;
  id: string;
  resource_id: string;
  created_at: string;
  data: Record<string, unknown>;
}

/** Ids of outbound requests: the event id, the Standard Webhooks `webhook-id`, the attempt log's key. */
export const newDeliveryId = () => `evt_${crypto.randomUUID().replace(/-/g, "")}`;

/**
 * An event's id is derived from what makes it unique (e.g. the resource, the type and the expiry it is
 * about), so an alarm that runs again after a failure emits the same event, not a second one.
 */
export function envelope(
  type: string,
  resourceId: string,
  data: Record<string, unknown>,
  uniqueBy: string,
  at: number,
): EventEnvelope {
  const id = `evt_${sha256Hex(`${resourceId}\n${type}\n${uniqueBy}`).slice(0, 32)}`;
  return { type, id, resource_id: resourceId, created_at: iso(at), data };
}

export interface EventTarget {
  url: string;
  /** Extra headers the caller configured (content-type is always JSON). */
  headers?: Record<string, string>;
}

/**
 * Queues one event and returns its delivery id. `uniqueBy` must single out this
 * occurrence within the resource (the envelope's id is derived from it).
 */
export function sendEvent(
  store: EngineStore,
  target: EventTarget,
  type: string,
  data: Record<string, unknown>,
  uniqueBy: string,
  sensitive = false,
): string {
  const event = envelope(type, store.resourceId, data, uniqueBy, store.now);
  const headers = Object.fromEntries(
    Object.entries(target.headers ?? {}).filter(([k]) => k.toLowerCase() !== "content-type"),
  );
  return store.send({
    id: event.id,
    url: target.url,
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: JSON.stringify(event),
    eventType: type,
    sensitive,
  });
}
