/**
 * The transformer's address: POST, PUT or PATCH with a JSON body, at the address or below it.
 * `prepare` runs the expressions (asynchronous) and stages the result; `handle` logs the request
 * and, in the same transaction, hands the result to the delivery pipeline. A request whose
 * expression fails, or whose body is not JSON, sends nothing: it is logged and answered 422.
 */
import type { Json } from "../../../json";
import { utf8 } from "../../../bytes";
import { MAX_INLINE_BODY_BYTES } from "../../../delivery/outbound";
import { definePublicFace, type PublicAnswer, type PublicRequest } from "../../../kind/public-face";
import type { PrepareContext } from "../../../kind/kind";
import { deeperThan, MAX_JSON_DEPTH } from "../../../json";
import { forwardedHeaders } from "../forwarding";
import { transform } from "./transform";
import { expressionsOf, log, roomFor } from "./store";
import { MAX_INPUT_BYTES, type TransformerConfig } from "./schema";

type Prepared =
  | { outcome: "failed"; error: string }
  | { outcome: "skipped" }
  | { outcome: "forwarded"; text: string | null; key: string | null; bytes: number; headers: Record<string, string> };

/** The body's JSON, read from R2 when the router stored it; undefined when it is not JSON. */
async function jsonBody(ctx: PrepareContext, request: PublicRequest): Promise<unknown> {
  const body = request.body;
  if (body === null) return undefined;
  const bytes =
    body instanceof Uint8Array ? body : new Uint8Array(await (await ctx.env.BUCKET.get(body.key))!.arrayBuffer());
  try {
    const value: unknown = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes));
    return deeperThan(value, MAX_JSON_DEPTH) ? undefined : value;
  } catch {
    return undefined;
  }
}

const sizeOf = (request: PublicRequest) =>
  request.body instanceof Uint8Array ? request.body.length : (request.body?.size ?? 0);

const problem = (detail: string): PublicAnswer => ({
  type: "problem",
  code: "validation_failed",
  detail: `Nothing was forwarded: ${detail}.`,
});

const ROUTE = {
  methods: ["POST", "PUT", "PATCH"] as ("POST" | "PUT" | "PATCH")[],
  maxBodyBytes: MAX_INPUT_BYTES,
  answers: ["json" as const],
};

export const transformerFace = definePublicFace<TransformerConfig, Prepared>({
  routes: [
    {
      name: "transform",
      path: "",
      ...ROUTE,
      summary:
        "The JSON body reshaped by the transformer's expression and forwarded to its target (signed, " +
        "retried); 422 when the body is not JSON or the expression fails (logged, nothing sent).",
    },
    {
      name: "transform_below",
      path: "/{path*}",
      ...ROUTE,
      summary: "The same, for any path below the address (`$path`).",
    },
  ],
  async prepare(ctx, _config, request) {
    roomFor(ctx.sql);
    const json = await jsonBody(ctx, request);
    if (json === undefined)
      return {
        outcome: "failed",
        error: `the body is not JSON (at most ${MAX_INPUT_BYTES} bytes, ${MAX_JSON_DEPTH} levels deep)`,
      };
    const out = await transform(expressionsOf(ctx.sql), json as Json, {
      headers: request.headers,
      method: request.method,
      path: request.path,
      query: Object.fromEntries(request.query),
    });
    if (!out.ok) return { outcome: "failed", error: out.error };
    if (out.body === null) return { outcome: "skipped" };
    const text = JSON.stringify(out.body);
    const bytes = utf8(text);
    if (bytes.length <= MAX_INLINE_BODY_BYTES)
      return { outcome: "forwarded", text, key: null, bytes: bytes.length, headers: out.headers };
    const key = `${ctx.resourceId}/transformed/${crypto.randomUUID()}`;
    await ctx.env.BUCKET.put(key, bytes, { customMetadata: { expires_at: String(ctx.expiresAt) } });
    return { outcome: "forwarded", text: null, key, bytes: bytes.length, headers: out.headers };
  },
  // A transformed body stored for the pipeline, for a request that then failed (the transformer full).
  discard: async (ctx, _config, prepared) => {
    if (prepared.outcome === "forwarded" && prepared.key) await ctx.env.BUCKET.delete(prepared.key);
  },
  handle(store, config, request, prepared): PublicAnswer {
    // A body the router stored in R2 has been read; nothing sends it on.
    if (request.body !== null && !(request.body instanceof Uint8Array)) store.dropObjects([request.body.key]);
    const entry = { receivedAt: request.receivedAt, inputBytes: sizeOf(request) };
    if (prepared.outcome === "failed") {
      log(store, { ...entry, outcome: "failed", error: prepared.error, deliveryId: null, outputBytes: null });
      return problem(prepared.error);
    }
    if (prepared.outcome === "skipped") {
      const seq = log(store, { ...entry, outcome: "skipped", error: null, deliveryId: null, outputBytes: null });
      return { type: "json", body: { received: true, seq, forwarded: false } };
    }
    const passed = forwardedHeaders(request.headers);
    delete passed["content-type"];
    const deliveryId = store.send({
      url: config.target_url,
      method: config.method,
      eventType: "transformer.request",
      headers: { ...passed, ...config.headers, ...prepared.headers, "content-type": "application/json" },
      body: prepared.key ? { key: prepared.key } : prepared.text,
      ...(config.retry_delays ? { retryDelays: config.retry_delays } : {}),
    });
    const seq = log(store, { ...entry, outcome: "forwarded", error: null, deliveryId, outputBytes: prepared.bytes });
    return { type: "json", body: { received: true, seq, forwarded: true, delivery_id: deliveryId } };
  },
});
