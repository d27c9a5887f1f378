/**
 * The HTTP rules of `/mcp` that come before any JSON-RPC method runs: who may call (Origin),
 * what the body and Accept must be, and which protocol revision a POST speaks. Each refusal is
 * an RpcFault with the status its revision prescribes, so the endpoint answers every one the same way.
 */
import type { Context } from "hono";
import type { AppEnv, Env } from "../env";
import { RPC_ERRORS, RpcFault } from "./jsonrpc";
import { features, HEADERLESS, isRevision, MODERN, negotiate, REVISIONS, type Revision } from "./revisions";

/** Where the request's protocol version is read in 2026-07-28 (and how a request says it is of that era). */
export const VERSION_META = "io.modelcontextprotocol/protocolVersion";

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * A header's value without the whitespace around it, which is not part of it (RFC 9110 §5.5); a runtime may
 * leave some.
 */
export function fieldValue(c: Context<AppEnv>, name: string): string | undefined {
  return c.req.header(name)?.replace(/^[ \t]+|[ \t]+$/g, "");
}

function originOf(value: string): string | null {
  try {
    return new URL(value).origin;
  } catch {
    return null; // "null" (a sandboxed frame, a file) and other non-URLs are no origin we could allow
  }
}

/** `MCP_ALLOWED_ORIGINS`: comma-separated origins (`https://app.example.com`); an entry that is not one is ignored. */
export function configuredOrigins(env: Pick<Env, "MCP_ALLOWED_ORIGINS">): string[] {
  return (env.MCP_ALLOWED_ORIGINS ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map(originOf)
    .filter((o): o is string => o !== null && o !== "null");
}

/**
 * Streamable HTTP: a server MUST validate Origin (DNS rebinding: a page on evil.example whose name
 * now resolves to this host sends its own Origin and Host). Allowed: no Origin at all (agents and
 * other non-browser clients send none), the operator's list, and the service's own origin, which
 * is BASE_URL's when set. Without BASE_URL it is the request's own, which Cloudflare pins to a
 * route of this worker; under `wrangler dev` (ENVIRONMENT=development) any Host reaches the
 * socket, so there the request's own origin counts only on a loopback name.
 */
export function checkOrigin(c: Context<AppEnv>): void {
  const header = fieldValue(c, "Origin");
  if (header === undefined) return;
  const origin = originOf(header);
  if (origin && origin !== "null" && allowedOrigin(c, origin)) return;
  throw new RpcFault(
    RPC_ERRORS.invalid_request,
    `Forbidden: Origin ${header} may not call this MCP endpoint (send no Origin, or ask the operator to ` +
      `add it to MCP_ALLOWED_ORIGINS).`,
    undefined,
    403,
  );
}

function allowedOrigin(c: Context<AppEnv>, origin: string): boolean {
  if (configuredOrigins(c.env).includes(origin)) return true;
  if (c.env.BASE_URL) return originOf(c.env.BASE_URL) === origin;
  const own = new URL(c.req.url);
  if (own.origin !== origin) return false;
  return c.env.ENVIRONMENT !== "development" || LOOPBACK.has(own.hostname);
}

/** Whether an Accept header admits `type`: an exact range, `type/*` or `*\/*`, not refused with q=0. */
export function admits(accept: string, type: string): boolean {
  const [major] = type.split("/");
  return accept.split(",").some((part) => {
    const [range, ...params] = part.split(";").map((s) => s.trim().toLowerCase());
    const refused = params.some((p) => /^q=0(\.0{0,3})?$/.test(p));
    return !refused && (range === type || range === `${major}/*` || range === "*/*");
  });
}

/**
 * Streamable HTTP (2025-03-26 on): the client MUST list both JSON and an event stream in Accept,
 * since the server picks per request. 2024-11-05's POSTs were answered on a separate stream, so
 * only JSON is asked of them. No Accept at all means anything is acceptable (RFC 9110 §12.5.1).
 */
export function checkAccept(c: Context<AppEnv>, revision: Revision): void {
  const accept = c.req.header("Accept");
  if (accept === undefined) return;
  const needed = features(revision).streamableHttp ? ["application/json", "text/event-stream"] : ["application/json"];
  const missing = needed.filter((type) => !admits(accept, type));
  if (missing.length === 0) return;
  throw new RpcFault(
    RPC_ERRORS.invalid_request,
    `Not Acceptable: protocol ${revision} needs an Accept header that admits ${needed.join(" and ")}` +
      ` (it lacks ${missing.join(", ")}).`,
    undefined,
    406,
  );
}

/** The body is JSON-RPC: a Content-Type, when sent, must say JSON. */
export function checkContentType(c: Context<AppEnv>): void {
  const type = c.req.header("Content-Type");
  if (type === undefined) return;
  const essence = type.split(";")[0]!.trim().toLowerCase();
  if (essence === "application/json" || /^application\/[\w.+-]+\+json$/.test(essence)) return;
  throw new RpcFault(
    RPC_ERRORS.invalid_request,
    `Unsupported Media Type: send the JSON-RPC message as application/json, not ${type}.`,
    undefined,
    415,
  );
}

export interface Wire {
  revision: Revision;
  /** 2026-07-28: served statelessly, by its own rules. */
  modern: boolean;
}

const unsupported = (requested: string) =>
  new RpcFault(
    RPC_ERRORS.unsupported_protocol_version,
    `Unsupported protocol version ${requested}: this server speaks ${REVISIONS.join(", ")}.`,
    { supported: [...REVISIONS], requested },
    400,
  );

const mismatch = (message: string) =>
  new RpcFault(RPC_ERRORS.header_mismatch, `Header mismatch: ${message}`, undefined, 400);

const record = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

function metaVersion(message: unknown): unknown {
  return record(record(record(message)?.params)?._meta)?.[VERSION_META];
}

/**
 * The revision a POST speaks. A version in `_meta` marks 2026-07-28's per-request metadata: the
 * header must then be there and say the same (HeaderMismatch), and name a version we serve
 * (UnsupportedProtocolVersion). Otherwise the header names a legacy revision, and a request
 * without one is an initialize (its own negotiation) or 2025-03-26, as the transport says.
 */
export function resolveWire(c: Context<AppEnv>, message: unknown): Wire {
  const header = fieldValue(c, "MCP-Protocol-Version");
  const meta = metaVersion(message);
  if (meta !== undefined) {
    if (header === undefined)
      throw mismatch(`the request carries ${VERSION_META} in _meta but no MCP-Protocol-Version header.`);
    if (header !== meta)
      throw mismatch(
        `MCP-Protocol-Version header ${header} does not match ${VERSION_META} ${JSON.stringify(meta)} in _meta.`,
      );
    if (!isRevision(meta)) throw unsupported(header);
    return { revision: meta, modern: meta === MODERN };
  }
  if (header === undefined) {
    const initialize = record(message)?.method === "initialize";
    const asked = record(record(message)?.params)?.protocolVersion;
    return { revision: initialize && typeof asked === "string" ? negotiate(asked) : HEADERLESS, modern: false };
  }
  if (!isRevision(header)) throw unsupported(header);
  return { revision: header, modern: header === MODERN };
}
