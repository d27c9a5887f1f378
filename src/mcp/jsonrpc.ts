/**
 * JSON-RPC 2.0 envelopes for the MCP endpoint: what a message is, and the
 * error objects we answer with. The zod schemas here also document `/mcp` in
 * the OpenAPI document, so the wire shape has one source.
 */
import { z } from "@hono/zod-openapi";

export const RPC_ERRORS = {
  parse_error: -32700,
  invalid_request: -32600,
  method_not_found: -32601,
  invalid_params: -32602,
  internal_error: -32603,
} as const;

// JSON-RPC allows a null id but MCP does not, and an answer to it could not be matched: null is refused.
const requestId = z.union([z.string(), z.int()]).describe("Absent on a notification (no answer).");

export const rpcRequest = z
  .object({
    jsonrpc: z.literal("2.0"),
    id: requestId.optional(),
    method: z.string().describe("`initialize`, `ping`, `tools/list`, `tools/call`, or a `notifications/…` message."),
    params: z.record(z.string(), z.unknown()).optional(),
  })
  .openapi("JsonRpcRequest");

const rpcErrorObject = z.object({ code: z.int(), message: z.string(), data: z.unknown().optional() });

export const rpcResponse = z
  .object({
    jsonrpc: z.literal("2.0"),
    id: requestId.nullable(),
    result: z.record(z.string(), z.unknown()).optional(),
    error: rpcErrorObject.optional(),
  })
  .openapi("JsonRpcResponse");

export type RpcId = string | number;
export type RpcResponse = z.infer<typeof rpcResponse>;

/** A message as it arrives; params stay unknown so each method can answer -32602 on its own terms. */
const incoming = z.object({
  jsonrpc: z.literal("2.0"),
  id: requestId.optional(),
  method: z.string().min(1),
  params: z.unknown().optional(),
});

export type Classified =
  | { type: "request"; id: RpcId; method: string; params: unknown }
  | { type: "notification"; method: string }
  /** A response from the client (we never send requests, so it is dropped) */
  | { type: "response" }
  | { type: "invalid"; id: RpcId | null; message: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function echoId(raw: Record<string, unknown>): RpcId | null {
  const id = raw.id;
  return typeof id === "string" || (typeof id === "number" && Number.isInteger(id)) ? id : null;
}

export function classify(raw: unknown): Classified {
  if (!isObject(raw)) return { type: "invalid", id: null, message: "A JSON-RPC message must be an object." };
  if (!("method" in raw) && ("result" in raw || "error" in raw)) return { type: "response" };
  const parsed = incoming.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { type: "invalid", id: echoId(raw), message: `Invalid JSON-RPC request: ${issue?.path.join(".") || "message"}: ${issue?.message}` };
  }
  const { id, method, params } = parsed.data;
  if (id === undefined) return { type: "notification", method };
  return { type: "request", id, method, params };
}

export function rpcResult(id: RpcId, result: Record<string, unknown>): RpcResponse {
  return { jsonrpc: "2.0", id, result };
}

export function rpcError(id: RpcId | null, code: number, message: string, data?: unknown): RpcResponse {
  return { jsonrpc: "2.0", id, error: data === undefined ? { code, message } : { code, message, data } };
}

/** Thrown inside a method to answer with a JSON-RPC error instead of a result. */
export class RpcFault extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}
