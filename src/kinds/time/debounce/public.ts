/**
 * The debouncer's public address: POST (or PUT) an event, no credentials. A JSON
 * body (application/json or +json) is the event as JSON, any other body its text,
 * an empty one null. The key comes from `?key=`, else from key_path in the event,
 * else the event goes to the unkeyed window.
 */
import { AppError } from "../../../http/errors";
import { parseCallerJson } from "../../../http/json-depth";
import type { Json } from "../../../json";
import type { EngineStore, PublicAnswer, PublicRequest } from "../../../resources/kind";
import type { DebounceConfig } from "./schema";
import { addEvent } from "./windows";

export const publicPaths = [
  {
    path: "", methods: ["post", "put"] as ("post" | "put")[],
    summary: "An event (JSON body as JSON, other bodies as text); `?key=` picks its window. Answers 202 with the window.",
  },
];

function eventOf(request: PublicRequest): Json {
  if (request.body === null) return null;
  if (!/[/+]json\b/i.test(request.contentType ?? "")) return request.body;
  return parseCallerJson(request.body, "event") as Json;
}

export function handleEvent(store: EngineStore, config: DebounceConfig, request: PublicRequest): PublicAnswer {
  if (request.method !== "POST" && request.method !== "PUT") {
    throw new AppError("method_not_allowed", "Send events with POST.", { headers: { Allow: "POST, PUT" } });
  }
  if (request.path !== "") throw new AppError("not_found", "Events go to the address itself; pick a window with ?key=.");
  const key = request.query.key === undefined || request.query.key === "" ? undefined : request.query.key;
  return { status: 202, body: addEvent(store, config, { event: eventOf(request), key, source: "public" }) };
}
