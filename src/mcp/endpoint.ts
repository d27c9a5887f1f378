/**
 * `POST /mcp`: one HTTP request, answered on its own, whatever revision it speaks. The transport
 * rules come first (Origin, Content-Type, a body that is JSON, the revision and its Accept rule),
 * then the message: a request gets its result or a JSON-RPC error (in JSON, or in an event stream
 * when it waits and the client asked for progress), a notification or a client's response gets
 * 202, and a batch is answered element by element where its revision has batches. Nothing is
 * remembered between requests: no session id is issued or read, so any instance answers any request.
 */
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { deeperThan, MAX_JSON_DEPTH } from "../json";
import { progressOf } from "./calls";
import type { MethodContext } from "./context";
import { classify, echoId, RPC_ERRORS, RpcFault, rpcError, rpcResult, type RpcResponse } from "./jsonrpc";
import { runMethod } from "./methods";
import { checkEnvelope, checkStandardHeaders } from "./modern";
import { eventStream, progressNotification } from "./progress";
import { features } from "./revisions";
import { selectedKinds } from "./toolsets";
import { checkAccept, checkContentType, checkOrigin, resolveWire } from "./transport";

/**
 * A batch runs its calls one after another and is rate-limited as one request, so this bounds both
 * how long it holds the worker and how far it stretches a limit.
 */
const MAX_BATCH = 20;
/**
 * A message nesting deeper than this is refused before anything serialises it again; a shallower
 * one reaches its route, which names the argument that nests past MAX_JSON_DEPTH (a tool error).
 */
const MAX_MESSAGE_DEPTH = 4 * MAX_JSON_DEPTH;

/**
 * 202 has no content, and says so twice: wrangler dev (like Cloudflare) would otherwise gzip the
 * empty body into a 20-byte chunked stream, which an MCP client cancels unread once it sees 202;
 * the runtime's last chunk then meets a closed socket ("Broken pipe" in the dev console).
 */
const accepted = (c: Context<AppEnv>) => c.body(null, 202, { "Content-Encoding": "identity" });

interface Answer {
  body: RpcResponse;
  status: 200 | 400 | 403 | 404 | 406 | 415 | 500;
}

async function answer(ctx: MethodContext, id: string | number, method: string, params: unknown): Promise<Answer> {
  try {
    return { body: rpcResult(id, await runMethod(ctx, method, params)), status: 200 };
  } catch (err) {
    if (err instanceof RpcFault)
      return { body: rpcError(id, err.code, err.message, err.data), status: err.status ?? 200 };
    console.error(`[${ctx.c.get("requestId")}] MCP ${method} failed`, err);
    return { body: rpcError(id, RPC_ERRORS.internal_error, "Internal error; it has been logged."), status: 500 };
  }
}

async function single(ctx: MethodContext, message: unknown, modern: boolean): Promise<Response> {
  const { c } = ctx;
  const msg = classify(message);
  if (msg.type === "invalid") return c.json(rpcError(msg.id, RPC_ERRORS.invalid_request, msg.message), 400);
  // Notifications have no effect here, and we never send requests whose responses a client could post.
  if (msg.type !== "request") return accepted(c);
  if (modern) {
    checkEnvelope(msg.params);
    checkStandardHeaders(c, msg.method, msg.params);
  }
  const progress =
    msg.method === "tools/call" && features(ctx.revision).streamableHttp ? progressOf(ctx, msg.params) : null;
  if (progress) {
    return eventStream(async (send) => {
      const sink = (done: number, total: number | undefined, text: string) =>
        send(progressNotification(progress.token, done, total, text));
      return (await answer({ ...ctx, progress: sink }, msg.id, msg.method, msg.params)).body;
    }, waitUntil(c));
  }
  const out = await answer(ctx, msg.id, msg.method, msg.params);
  return c.json(out.body, out.status);
}

async function batch(ctx: MethodContext, messages: unknown[]): Promise<Response> {
  const { c, revision } = ctx;
  if (!features(revision).batches) {
    throw new RpcFault(
      RPC_ERRORS.invalid_request,
      `Invalid request: JSON-RPC batches are part of protocol 2025-03-26 only, and this request speaks ` +
        `${revision}: send one message per POST.`,
      undefined,
      400,
    );
  }
  if (messages.length === 0)
    throw new RpcFault(RPC_ERRORS.invalid_request, "Invalid request: an empty batch is not a request.", undefined, 400);
  if (messages.length > MAX_BATCH)
    throw new RpcFault(
      RPC_ERRORS.invalid_request,
      `Invalid request: a batch holds at most ${MAX_BATCH} messages.`,
      undefined,
      400,
    );
  // In order, one at a time: calls of a batch may spend the same balance or the same x402 header.
  const out: RpcResponse[] = [];
  for (const raw of messages) {
    const msg = classify(raw);
    if (msg.type === "invalid") out.push(rpcError(msg.id, RPC_ERRORS.invalid_request, msg.message));
    else if (msg.type === "request" && msg.method === "initialize")
      out.push(
        rpcError(
          msg.id,
          RPC_ERRORS.invalid_request,
          "Invalid request: initialize must not be part of a batch (2025-03-26 lifecycle).",
        ),
      );
    else if (msg.type === "request") out.push((await answer(ctx, msg.id, msg.method, msg.params)).body);
  }
  return out.length ? c.json(out, 200) : accepted(c);
}

function waitUntil(c: Context<AppEnv>): ((p: Promise<unknown>) => void) | undefined {
  try {
    return (p) => c.executionCtx.waitUntil(p);
  } catch {
    return undefined; // Hono throws when the runtime gave no execution context (app.request in Node)
  }
}

async function parsedBody(c: Context<AppEnv>): Promise<unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await c.req.text());
  } catch {
    throw new RpcFault(RPC_ERRORS.parse_error, "Parse error: the body is not JSON.", undefined, 400);
  }
  if (deeperThan(parsed, MAX_MESSAGE_DEPTH)) {
    throw new RpcFault(
      RPC_ERRORS.invalid_request,
      `Invalid request: the message nests deeper than ${MAX_MESSAGE_DEPTH} levels (a tool argument may ` +
        `nest ${MAX_JSON_DEPTH}).`,
      undefined,
      400,
    );
  }
  return parsed;
}

export async function handlePost(base: Pick<MethodContext, "app" | "c" | "tools">): Promise<Response> {
  const { c } = base;
  let message: unknown = null;
  try {
    checkOrigin(c);
    checkContentType(c);
    message = await parsedBody(c);
    const wire = resolveWire(c, message);
    checkAccept(c, wire.revision);
    // An unknown toolset is the caller's mistake in the URL: a 400 problem, as on every route with a query.
    const ctx: MethodContext = { ...base, kinds: selectedKinds(c.req.query("toolsets")), revision: wire.revision };
    return Array.isArray(message) ? await batch(ctx, message) : await single(ctx, message, wire.modern);
  } catch (err) {
    // A refusal of the HTTP request itself: the JSON-RPC error answers the message's id when it has one.
    if (err instanceof RpcFault && err.status)
      return c.json(rpcError(echoId(message), err.code, err.message, err.data), err.status);
    throw err;
  }
}
