/**
 * The debouncer's public address: POST (or PUT) an event, no credentials. A JSON
 * body (application/json or +json) is the event as JSON, any other body its text,
 * an empty one null. The key comes from `?key=`, else from key_path in the event,
 * else the event goes to the unkeyed window.
 */
import { parseCallerJson } from "../../../http/json-depth";
import type { Json } from "../../../json";
import { definePublicFace, type PublicRequest } from "../../../kind/public-face";
import { bodyText, headerOf, queryOf } from "../../../kind/public-request";
import type { DebounceConfig } from "./schema";
import { addEvent } from "./store/windows";

function eventOf(request: PublicRequest): Json {
  const text = bodyText(request);
  if (text === null) return null;
  if (!/[/+]json\b/i.test(headerOf(request, "content-type") ?? "")) return text;
  return parseCallerJson(text, "event") as Json;
}

export const eventFace = definePublicFace<DebounceConfig>({
  routes: [
    {
      name: "event",
      path: "",
      methods: ["POST", "PUT"],
      summary:
        "An event (JSON body as JSON, other bodies as text); `?key=` picks its window. Answers 202 with the window.",
    },
  ],
  handle(store, config, request) {
    const key = queryOf(request, "key") || undefined;
    return {
      type: "json",
      status: 202,
      body: addEvent(store, config, { event: eventOf(request), key, source: "public" }),
    };
  },
});
