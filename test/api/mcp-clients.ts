/**
 * The MCP clients the tests drive over HTTP against the worker (SELF.fetch): the official 1.x SDK
 * client (it asks for 2025-11-25, or is forced down to 2024-11-05 by rewriting its initialize),
 * the official v2 client (2026-07-28, stateless, pinned by server/discover), and raw JSON-RPC for
 * the 2025-03-26 batch client and for what no well-behaved client sends.
 */
import { SELF } from "cloudflare:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { ORIGIN } from "../harness";
import type { JsonSchema } from "./schema-body";

/**
 * A JSON object with no shape of its own in these tests: a tool's arguments, `_meta`, an answer only compared whole.
 */
export type Body = Record<string, unknown>;

/** What tools/call answers; `S` is the shape of structuredContent where the test reads into it. */
export interface ToolAnswer<S = Body> {
  isError?: boolean;
  structuredContent?: S;
  content: { type: string; text: string }[];
  _meta?: Body;
}

/** A JSON-RPC error. */
export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** A JSON-RPC answer as the wire carries it: `result` in the shape the method answers (`R`), or `error`. */
export interface RpcAnswer<R = Body> {
  jsonrpc: "2.0";
  id: number | string | null;
  result?: R;
  error?: RpcError;
}

/** A tool as tools/list lists it (src/mcp/tools.ts ToolFace; a revision leaves out the fields it does not have). */
export interface ListedTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  annotations?: {
    title?: string;
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint?: boolean;
  };
  icons?: { src: string; mimeType?: string; sizes?: string[] }[];
  _meta?: Body;
}

/** One page of tools/list. */
export interface ToolPage {
  tools: ListedTool[];
  nextCursor?: string;
}

/** x402 v2 terms, as a refused paid tool call carries them (structuredContent, or the text's `x402/error` data). */
export interface X402Terms {
  x402Version: number;
  accepts: { scheme: string; network: string; amount: string }[];
}

const url = (toolsets?: string) => new URL(`${ORIGIN}/mcp${toolsets ? `?toolsets=${toolsets}` : ""}`);
const auth = (bearer?: string) => (bearer ? { headers: { Authorization: `Bearer ${bearer}` } } : undefined);

/** Makes the 1.x client's initialize ask for `version` (it always asks for its newest otherwise). */
function askingFor(version: string | undefined): typeof fetch {
  return async (input, init) => {
    if (version && typeof init?.body === "string" && init.body.includes('"method":"initialize"')) {
      const body = JSON.parse(init.body) as { params: { protocolVersion: string } };
      body.params.protocolVersion = version;
      return SELF.fetch(input, { ...init, body: JSON.stringify(body) });
    }
    return SELF.fetch(input, init);
  };
}

/** The 1.x SDK client (`@modelcontextprotocol/sdk` 1.32), through initialize. */
export async function connectV1(
  options: { bearer?: string; toolsets?: string; version?: "2024-11-05" | "2025-06-18" } = {},
) {
  const transport = new StreamableHTTPClientTransport(url(options.toolsets), {
    fetch: askingFor(options.version),
    requestInit: auth(options.bearer),
  });
  const client = new Client({ name: "zeitvault-tests", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

/**
 * The v2 client (`@modelcontextprotocol/client` 2.4), stateless 2026-07-28: server/discover, then `_meta` on every
 * request.
 */
export async function connectV2(options: { bearer?: string; toolsets?: string } = {}) {
  const transport = new ModernTransport(url(options.toolsets), {
    fetch: (input, init) => SELF.fetch(input, init),
    requestInit: auth(options.bearer),
  });
  const client = new ModernClient(
    { name: "zeitvault-tests-v2", version: "2.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(transport);
  return { client, transport };
}

export const MODERN_META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "0" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

/** Headers a well-behaved client of `version` sends with a POST (none for a headerless 2025-03-26 client). */
export function wireHeaders(version?: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    ...(version ? { "mcp-protocol-version": version } : {}),
    ...extra,
  };
}

/** One raw POST: `body` as JSON (or as the string given). */
export function post(body: unknown, headers: Record<string, string> = wireHeaders(), query = ""): Promise<Response> {
  return SELF.fetch(`${ORIGIN}/mcp${query}`, {
    method: "POST",
    headers,
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** A raw 2026-07-28 request, with its `_meta` and standard headers. */
export function modern(
  id: number,
  method: string,
  params: Body & { _meta?: Body } = {},
  extra: Record<string, string> = {},
): Promise<Response> {
  const name = typeof params.name === "string" ? params.name : typeof params.uri === "string" ? params.uri : undefined;
  const headers = wireHeaders("2026-07-28", { "mcp-method": method, ...(name ? { "mcp-name": name } : {}), ...extra });
  return post(
    { jsonrpc: "2.0", id, method, params: { ...params, _meta: { ...MODERN_META, ...params._meta } } },
    headers,
  );
}
