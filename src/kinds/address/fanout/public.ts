/**
 * The fanout's address: POST, PUT, PATCH or DELETE, at the address or below it. `prepare` runs each
 * destination's filter (JSONata is asynchronous) and stages the body for the pipeline; `handle`
 * records the message and, in the same transaction, one delivery per destination that passed:
 * all committed together, or none. A destination added between the two steps makes `handle` ask for
 * the request to be prepared again (it takes every message committed after it was added); one removed
 * between them gets nothing.
 */
import type { Json } from "../../../json";
import { evaluate } from "../../../expressions/jsonata";
import { definePublicFace, PreparedStale, type PublicRequest } from "../../../kind/public-face";
import { discardForward, forwardBody, forwardedHeaders, jsonOf, type ForwardBody } from "../forwarding";
import { activeDestinations, messageCount, recordMessage, recordSend } from "./store";
import { MAX_FILTERED_BYTES, MAX_MESSAGE_BYTES, MAX_MESSAGES, type FanoutConfig, type Filter } from "./schema";
import { AppError } from "../../../http/errors";

type Verdict = { pass: boolean; error: string | null };
interface Prepared {
  verdicts: Record<string, Verdict>;
  body: ForwardBody;
}

/** The value at a dotted path (`a.b.0.c`) of a JSON value, or undefined. */
function at(value: unknown, path: string): unknown {
  return path
    .split(".")
    .reduce<unknown>(
      (v, key) => (v !== null && typeof v === "object" ? (v as Record<string, unknown>)[key] : undefined),
      value,
    );
}

async function passes(filter: Filter | null, body: unknown, request: PublicRequest): Promise<Verdict> {
  if (!filter) return { pass: true, error: null };
  // not JSON (or too large to look into): only unfiltered destinations take it
  if (body === undefined) return { pass: false, error: null };
  for (const [path, expected] of Object.entries(filter.equals ?? {})) {
    if (JSON.stringify(at(body, path)) !== JSON.stringify(expected)) return { pass: false, error: null };
  }
  if (filter.jsonata === undefined) return { pass: true, error: null };
  const result = await evaluate(filter.jsonata, body as Json, {
    headers: request.headers,
    method: request.method,
    path: request.path,
  });
  return result.ok ? { pass: result.value === true, error: null } : { pass: false, error: result.error };
}

const ROUTE = {
  methods: ["POST", "PUT", "PATCH", "DELETE"] as ("POST" | "PUT" | "PATCH" | "DELETE")[],
  maxBodyBytes: MAX_MESSAGE_BYTES,
  answers: ["json" as const],
};

export const fanoutFace = definePublicFace<FanoutConfig, Prepared>({
  routes: [
    {
      name: "publish",
      path: "",
      ...ROUTE,
      summary:
        "Sent on to every destination whose filter it passes, each delivery signed and retried on its own; " +
        "answers the message's seq and how many destinations it went to.",
    },
    { name: "publish_below", path: "/{path*}", ...ROUTE, summary: "The same, for any path below the address." },
  ],
  async prepare(ctx, _config, request) {
    if (messageCount(ctx.sql).messages >= MAX_MESSAGES)
      throw new AppError(
        "storage_full",
        `This fanout takes at most ${MAX_MESSAGES} messages in its life; use another.`,
      );
    const destinations = activeDestinations(ctx.sql);
    const body = destinations.some((d) => d.filter) ? jsonOf(request, MAX_FILTERED_BYTES) : undefined;
    const verdicts: Record<string, Verdict> = {};
    for (const d of destinations) verdicts[d.id] = await passes(d.filter, body, request);
    const anyone = Object.values(verdicts).some((v) => v.pass);
    return { verdicts, body: anyone ? await forwardBody(ctx, request) : null };
  },
  discard: (ctx, _config, prepared) => discardForward(ctx, prepared.body),
  handle(store, _config, request, prepared) {
    const seq = recordMessage(store, {
      receivedAt: request.receivedAt,
      method: request.method,
      path: request.path,
      size: request.body instanceof Uint8Array ? request.body.length : (request.body?.size ?? 0),
    });
    const headers = forwardedHeaders(request.headers);
    const body = prepared.body;
    let sent = 0;
    for (const d of activeDestinations(store.sql)) {
      const verdict = prepared.verdicts[d.id];
      if (!verdict) throw new PreparedStale(`destination ${d.id} was added while the message was prepared`);
      if (!verdict.pass) {
        recordSend(store.sql, d.id, seq, verdict.error ? "filter_error" : "filtered_out", null, verdict.error);
        continue;
      }
      const deliveryId = store.send({
        url: d.url,
        method: request.method as "POST",
        headers: { ...headers, ...d.headers },
        eventType: "fanout.message",
        body: body === null ? null : "text" in body ? body.text : { key: body.stored.key },
        ...(d.retry_delays ? { retryDelays: d.retry_delays } : {}),
      });
      recordSend(store.sql, d.id, seq, "sent", deliveryId);
      sent++;
    }
    // A stored body nothing sends is let go of now (the pipeline deletes one that deliveries share once they settle).
    const stored =
      request.body !== null && !(request.body instanceof Uint8Array)
        ? request.body.key
        : body && "stored" in body
          ? body.stored.key
          : null;
    if (stored && sent === 0) store.dropObjects([stored]);
    return { type: "json", body: { received: true, seq, sent } };
  },
});
