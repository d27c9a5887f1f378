/**
 * What 2026-07-28 asks of a request and of a result beyond the legacy revisions: every request
 * carries its version and the client's capabilities in `_meta` (-32602, HTTP 400 without them),
 * mirrors its method and name into Mcp-Method / Mcp-Name (-32020, HTTP 400 when they are missing
 * or say otherwise), and every result says `resultType`, who answered, and how long list-like
 * results stay fresh. Nothing is kept between requests: each one carries all of this itself.
 */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { fromBase64 } from "../bytes";
import { RPC_ERRORS, RpcFault } from "./jsonrpc";
import { fieldValue } from "./transport";

const LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"] as const;

const requestMeta = z.object({
  "io.modelcontextprotocol/protocolVersion": z.string(),
  "io.modelcontextprotocol/clientCapabilities": z.record(z.string(), z.unknown()),
  "io.modelcontextprotocol/clientInfo": z.object({ name: z.string(), version: z.string() }).loose().optional(),
  "io.modelcontextprotocol/logLevel": z.enum(LEVELS).optional(),
});

/** The `_meta` every 2026-07-28 request must carry (basic/index: per-request protocol fields). */
export function checkEnvelope(params: unknown): void {
  const meta = typeof params === "object" && params !== null ? (params as { _meta?: unknown })._meta : undefined;
  if (meta === undefined)
    throw new RpcFault(
      RPC_ERRORS.invalid_params,
      "Invalid params: a 2026-07-28 request carries _meta with io.modelcontextprotocol/protocolVersion and " +
        "io.modelcontextprotocol/clientCapabilities.",
      undefined,
      400,
    );
  const parsed = requestMeta.safeParse(meta);
  if (parsed.success) return;
  const issue = parsed.error.issues[0];
  throw new RpcFault(
    RPC_ERRORS.invalid_params,
    `Invalid params: _meta.${issue?.path.join(".") || ""}: ${issue?.message}`,
    undefined,
    400,
  );
}

/** Methods whose target is mirrored into Mcp-Name, and where the body says it. */
const NAMED: Record<string, "name" | "uri"> = { "tools/call": "name", "prompts/get": "name", "resources/read": "uri" };

/** Mcp-Name may carry a value that is not plain ASCII as `=?base64?…?=` (transports: value encoding). */
function decodedHeader(value: string): string | null {
  const sentinel = /^=\?base64\?(.*)\?=$/.exec(value);
  if (!sentinel) return value;
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(fromBase64(sentinel[1] ?? ""));
  } catch {
    return null;
  }
}

const mismatch = (message: string) =>
  new RpcFault(RPC_ERRORS.header_mismatch, `Header mismatch: ${message}`, undefined, 400);

/**
 * Streamable HTTP (2026-07-28), server validation: the standard headers must be present and say
 * what the body says, so a gateway routing on them and this server act on the same request.
 */
export function checkStandardHeaders(c: Context<AppEnv>, method: string, params: unknown): void {
  const sent = fieldValue(c, "Mcp-Method");
  if (sent === undefined) throw mismatch("the Mcp-Method header is required.");
  if (sent !== method) throw mismatch(`Mcp-Method header ${sent} does not match the body's method ${method}.`);
  const field = NAMED[method];
  if (!field) return;
  const value = typeof params === "object" && params !== null ? (params as Record<string, unknown>)[field] : undefined;
  if (typeof value !== "string") return; // the method's own validation names the missing field
  const header = fieldValue(c, "Mcp-Name");
  if (header === undefined) throw mismatch(`the Mcp-Name header is required for ${method}.`);
  const decoded = decodedHeader(header);
  if (decoded === null) throw mismatch("the Mcp-Name header's =?base64?…?= value is not base64 of UTF-8.");
  if (decoded !== value)
    throw mismatch(
      `Mcp-Name header ${JSON.stringify(decoded)} does not match params.${field} ${JSON.stringify(value)}.`,
    );
}

/** Freshness of list-like results: they change only when the service is deployed, and are the same for every caller. */
export const CACHE_HINTS = { ttlMs: 3_600_000, cacheScope: "public" } as const;

/** Methods whose results MUST carry cache hints (server/utilities/caching). */
export const CACHEABLE = new Set([
  "server/discover",
  "tools/list",
  "prompts/list",
  "resources/list",
  "resources/templates/list",
  "resources/read",
]);

/**
 * A complete 2026-07-28 result: its type, the server's identity in `_meta`, and cache hints where the method has them.
 */
export function decorate(
  method: string,
  result: Record<string, unknown>,
  serverInfo: Record<string, unknown>,
): Record<string, unknown> {
  const meta =
    typeof result._meta === "object" && result._meta !== null ? (result._meta as Record<string, unknown>) : {};
  return {
    ...result,
    resultType: "complete",
    ...(CACHEABLE.has(method) ? CACHE_HINTS : {}),
    _meta: { ...meta, "io.modelcontextprotocol/serverInfo": serverInfo },
  };
}
