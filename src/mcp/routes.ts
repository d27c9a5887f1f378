/**
 * `POST /mcp`: the JSON-RPC tool endpoint (API.md §13), hand-written on Hono.
 * Stateless: no session, no server-to-client stream (GET answers 405, which MCP
 * clients take as "no SSE stream"). Every answer to a valid POST is HTTP 200
 * with JSON-RPC results or errors, or 202 when there is nothing to answer.
 */
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { AppEnv } from "../env";
import { AppError } from "../http/errors";
import { deeperThan, MAX_JSON_DEPTH } from "../json";
import { errorResponses } from "../openapi/responses";
import type { AppFetch } from "./dispatch";
import { classify, RPC_ERRORS, RpcFault, rpcError, rpcRequest, rpcResponse, rpcResult, type RpcResponse } from "./jsonrpc";
import { runMethod, type MethodContext } from "./methods";
import { buildRouteTools, type Catalogue } from "./tools";
import { selectedKinds, TOOLSET_NAMES } from "./toolsets";

const MAX_BODY_BYTES = 1024 * 1024;
/**
 * A batch runs its calls one after another and is rate-limited as one request, so
 * this bounds both how long it holds the worker and how far it stretches a limit.
 */
const MAX_BATCH = 20;
/**
 * A message nesting deeper than this is refused before anything serialises it again; a shallower
 * one reaches its route, which names the argument that nests past MAX_JSON_DEPTH (a tool error).
 */
const MAX_MESSAGE_DEPTH = 4 * MAX_JSON_DEPTH;

async function answer(ctx: MethodContext, raw: unknown): Promise<RpcResponse | null> {
  const msg = classify(raw);
  if (msg.type === "invalid") return rpcError(msg.id, RPC_ERRORS.invalid_request, msg.message);
  // Notifications are only acknowledged: none of ours has an effect, and a paid
  // tools/call sent without an id would charge for an answer nobody can receive.
  if (msg.type !== "request") return null;
  try {
    return rpcResult(msg.id, await runMethod(ctx, msg.method, msg.params));
  } catch (err) {
    if (err instanceof RpcFault) return rpcError(msg.id, err.code, err.message, err.data);
    console.error(`[${ctx.c.get("requestId")}] MCP ${msg.method} failed`, err);
    return rpcError(msg.id, RPC_ERRORS.internal_error, "Internal error; it has been logged.");
  }
}

async function handle(ctx: MethodContext, c: Context<AppEnv>): Promise<Response> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await c.req.text());
  } catch {
    return c.json(rpcError(null, RPC_ERRORS.parse_error, "Parse error: the body is not JSON."), 200);
  }
  if (deeperThan(parsed, MAX_MESSAGE_DEPTH)) {
    return c.json(rpcError(null, RPC_ERRORS.invalid_request, `Invalid request: the message nests deeper than ${MAX_MESSAGE_DEPTH} levels (a tool argument may nest ${MAX_JSON_DEPTH}).`), 200);
  }
  if (!Array.isArray(parsed)) {
    const one = await answer(ctx, parsed);
    return one ? c.json(one, 200) : c.body(null, 202);
  }
  if (parsed.length === 0) return c.json(rpcError(null, RPC_ERRORS.invalid_request, "An empty batch is not a request."), 200);
  if (parsed.length > MAX_BATCH) return c.json(rpcError(null, RPC_ERRORS.invalid_request, `A batch holds at most ${MAX_BATCH} messages.`), 200);
  // In order, one at a time: calls of a batch may spend the same balance or the same x402 header.
  const out: RpcResponse[] = [];
  for (const raw of parsed) {
    const one = await answer(ctx, raw);
    if (one) out.push(one);
  }
  return out.length ? c.json(out, 200) : c.body(null, 202);
}

function documentEndpoint(app: OpenAPIHono<AppEnv>): void {
  app.openAPIRegistry.registerPath({
    method: "post", path: "/mcp", operationId: "mcp", tags: ["MCP"],
    summary: "JSON-RPC tool endpoint (MCP, streamable HTTP, protocol 2024-11-05)",
    description:
      "JSON-RPC 2.0, one message or a batch. Methods: `initialize`, `ping`, `tools/list` (free, no credential) and `tools/call`. " +
      "`tools/list` shows a small generic surface that reaches every kind and fits every client's tool limit: `list_kinds`, " +
      "`describe_kind`, `create_resource`, `call_operation`, the four resource tools, the money tools and `request_feature`; " +
      "`?toolsets=` adds the typed tools of chosen families or kinds (any tool may be called by name whether listed or not). " +
      "Tools mirror the REST operations and are paid the same way: the bearer credential of this request, an x402 header, or " +
      "`params._meta[\"x402/payment\"]`; the settlement comes back in `result._meta[\"x402/payment-response\"]`. " +
      "A refused call is a tool result with `isError: true` (the problem, or the x402 PaymentRequired terms), not a JSON-RPC error. " +
      "GET and DELETE answer 405: there is no server-to-client stream and no session.",
    security: [{}, { credit: [] }, { x402: [] }, { x402v2: [] }],
    request: {
      query: z.object({
        toolsets: z.string().max(2000).optional().openapi({ example: "memory,wakeups" }).describe(
          "Comma-separated families or kinds whose typed tools (`create_<kind>`, `<kind>_<operation>`) `tools/list` adds to the default generic ones, or `all`. " +
          `Known: ${TOOLSET_NAMES.join(", ")}. An unknown name is a 400.`,
        ),
      }),
      body: { required: true, content: { "application/json": { schema: z.union([rpcRequest, z.array(rpcRequest).min(1)]), example: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "describe_kind", arguments: { kind: "counters" } } } } } } },
    responses: {
      200: {
        description: "JSON-RPC answers: one, or an array for a batch. JSON-RPC errors (-32700 … -32603) are answered with 200 too.",
        content: { "application/json": { schema: z.union([rpcResponse, z.array(rpcResponse)]) } },
      },
      202: { description: "Only notifications or responses were sent: nothing to answer." },
      // Refusals before JSON-RPC is read: body size, rate limits, Idempotency-Key misuse.
      ...errorResponses([409, 413, 422]),
    },
  });
}

/** Registers `/mcp` on `app`, which is also the app its tools call into. */
export function registerMcpRoutes(app: OpenAPIHono<AppEnv>): void {
  let catalogue: Catalogue | undefined;
  // Built on first use, so it sees every route whatever the order of registration.
  const tools = () => (catalogue ??= buildRouteTools(app));
  const fetcher: AppFetch = app;

  app.use("/mcp", bodyLimit({ maxSize: MAX_BODY_BYTES, onError: () => { throw new AppError("payload_too_large", `Bodies are limited to ${MAX_BODY_BYTES} bytes.`); } }));
  app.post("/mcp", (c) => handle({ app: fetcher, c, tools, kinds: selectedKinds(c.req.query("toolsets")) }, c));
  app.all("/mcp", () => {
    throw new AppError("method_not_allowed", "The MCP endpoint answers POST only: no server-to-client stream, no session to end.", { headers: { Allow: "POST" } });
  });
  documentEndpoint(app);
}
