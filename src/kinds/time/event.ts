/**
 * Events a Time kind raises on its own (a dead-man switch going down, a debounce
 * window firing): the envelope of API.md §11 as JSON, posted through store.send so
 * they are signed, retried and logged like every other outbound request.
 */
import { envelope } from "../../delivery/events";
import type { EngineStore } from "../../resources/kind";
import { iso } from "../../time";

export interface EventTarget {
  url: string;
  /** Extra headers the caller configured (content-type is always JSON). */
  headers?: Record<string, string>;
}

/**
 * Queues one event and returns its delivery id. `uniqueBy` must single out this
 * occurrence within the resource (the envelope's id is derived from it).
 */
export function sendEvent(store: EngineStore, target: EventTarget, type: string, data: Record<string, unknown>, uniqueBy: string, sensitive = false): string {
  const event = { ...envelope(type, store.resourceId, data, uniqueBy), created_at: iso(store.now) };
  const headers = Object.fromEntries(Object.entries(target.headers ?? {}).filter(([k]) => k.toLowerCase() !== "content-type"));
  return store.send({ id: event.id, url: target.url, method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(event), eventType: type, sensitive });
}


/** The first `max` bytes of `text`, cut at a character boundary. */
export function excerpt(text: string, max: number): string {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= max) return text;
  // A cut inside a multi-byte character decodes to U+FFFD: drop that partial tail.
  return new TextDecoder().decode(bytes.slice(0, max)).replace(/\uFFFD$/, "");
}
