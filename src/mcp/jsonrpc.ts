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
  /** 2025-11-25 and earlier: a resource URI that names nothing (2026-07-28 answers invalid_params). */
  resource_not_found: -32002,
  /** 2026-07-28: MCP-Protocol-Version, Mcp-Method or Mcp-Name missing, or not what the body says. */
  header_mismatch: -32020,
  /**
   * 2026-07-28: the request needs a client capability it did not declare (never, here: no tool asks the client
   * anything).
   */
  missing_client_capability: -32021,
  /** 2026-07-28: a protocol version this server does not serve; `data` lists the ones it does. */
  unsupported_protocol_version: -32022,
} as const;

// JSON-RPC allows a null id but MCP does not, and an answer to it could not be matched: null is refused.
const requestId = z.union([z.string(), z.int()]).describe("Absent on a notification (no answer).");

export const rpcRequest = z
  .object({
    jsonrpc: z.literal("2.0"),
    id: requestId.optional(),
    method: z
      .string()
      .describe(
        "`initialize` or `server/discover`, `tools/list`, `tools/call`, `resources/…`, `prompts/…`, " +
          "`completion/complete`, `ping`, `logging/setLevel`, or a `notifications/…` message.",
      ),
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
  | { type: "notification"; method: string; params: unknown }
  /** A response from the client (we never send requests, so it is dropped) */
  | { type: "response" }
  | { type: "invalid"; id: RpcId | null; message: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The id of a message, when it has a usable one: what an error about the message answers to. */
export function echoId(raw: unknown): RpcId | null {
  const id = isObject(raw) ? raw.id : undefined;
  return typeof id === "string" || (typeof id === "number" && Number.isInteger(id)) ? id : null;
}

export function classify(raw: unknown): Classified {
  if (!isObject(raw)) return { type: "invalid", id: null, message: "A JSON-RPC message must be an object." };
  if (!("method" in raw) && ("result" in raw || "error" in raw)) return { type: "response" };
  const parsed = incoming.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      type: "invalid",
      id: echoId(raw),
      message: `Invalid JSON-RPC request: ${issue?.path.join(".") || "message"}: ${issue?.message}`,
    };
  }
  const { id, method, params } = parsed.data;
  if (id === undefined) return { type: "notification", method, params };
  return { type: "request", id, method, params };
}

export function rpcResult(id: RpcId, result: Record<string, unknown>): RpcResponse {
  return { jsonrpc: "2.0", id, result };
}

export function rpcError(id: RpcId | null, code: number, message: string, data?: unknown): RpcResponse {
  return { jsonrpc: "2.0", id, error: data === undefined ? { code, message } : { code, message, data } };
}

/**
 * Thrown inside a method, or by the transport's checks, to answer with a JSON-RPC error instead
 * of a result. `status` is the HTTP status a revision prescribes for it (400 for a malformed or
 * mismatched request, 404 for an unknown method in 2026-07-28); without one the error rides a 200.
 */
export class RpcFault extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
    readonly status?: 400 | 403 | 404 | 406 | 415,
  ) {
    super(message);
  }
}
