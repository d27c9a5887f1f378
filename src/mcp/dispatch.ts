/**
 * Runs one tool call as an internal request to its REST route, through the same
 * Hono app, so validation, authentication, payment, idempotency and errors have
 * one implementation. This module only translates: MCP arguments and credentials
 * into a Request, and the Response into an MCP tool result.
 */
import type { Context, Hono } from "hono";
import type { AppEnv } from "../env";
import { fromBase64, toBase64 } from "../bytes";
import { AppError, problemResponse, validationError } from "../http/errors";
import { bearer } from "../auth/credentials";
import { decodeHeader as decodeBase64Json, encodeHeader } from "../money/x402/terms";
import { countedAtEntry } from "../http/rate-limit";
import { isMediaType } from "../http/header-fields";
import type { Tool } from "./tools";

/** What dispatch needs of the app: its fetch (taken as a parameter, so no module imports app.ts). */
export type AppFetch = Pick<Hono<AppEnv>, "fetch">;

export type PaymentPayload = Record<string, unknown>;

export interface ToolResult {
  [key: string]: unknown;
  content: { type: "text"; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

/**
 * The client's own headers that matter to the route beyond credentials: the caller's IP (rate limits, Ask) and agent.
 */
const FORWARDED = ["CF-Connecting-IP", "X-Forwarded-For", "User-Agent"];

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

export function result(body: unknown, isError: boolean): ToolResult {
  const out: ToolResult = { content: [{ type: "text", text: JSON.stringify(body) }] };
  if (isRecord(body)) out.structuredContent = body;
  if (isError) out.isError = true;
  return out;
}

async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return { text };
  }
}

/** An error found before any request is made, answered with the same problem body a route would give. */
export async function problemResult(err: AppError, c: Context<AppEnv>): Promise<ToolResult> {
  return result(await problemResponse(err, c).json(), true);
}

function executionCtx(c: Context<AppEnv>): Context<AppEnv>["executionCtx"] | undefined {
  try {
    return c.executionCtx;
  } catch {
    return undefined; // Hono throws when the runtime gave none (e.g. app.request in Node)
  }
}

function buildUrl(
  c: Context<AppEnv>,
  tool: Tool,
  located: Record<string, unknown>,
  args: Record<string, unknown>,
): URL {
  const path = tool.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(located[name])));
  const url = new URL(path, c.req.url);
  for (const key of tool.queryKeys) {
    const value = args[key];
    if (value === undefined || value === null) continue;
    for (const item of Array.isArray(value) ? value : [value]) {
      url.searchParams.append(key, typeof item === "object" ? JSON.stringify(item) : String(item));
    }
  }
  return url;
}

/** A raw upload's bytes from `content_base64`; refused as a tool error when they are not base64. */
function uploadBytes(args: Record<string, unknown>): Uint8Array {
  const text = typeof args.content_base64 === "string" ? args.content_base64 : "";
  try {
    return fromBase64(text);
  } catch {
    throw new AppError("validation_failed", "content_base64: is not base64", {
      errors: [{ path: "content_base64", message: "is not base64" }],
    });
  }
}

/**
 * The upload's media type; checked here, as the REST route checks its header, since a bad one cannot even be set as a
 * header.
 */
function uploadType(args: Record<string, unknown>): string {
  if (args.content_type === undefined) return "application/octet-stream";
  if (typeof args.content_type === "string" && isMediaType(args.content_type)) return args.content_type;
  throw new AppError("validation_failed", "content_type: must be a media type like text/plain", {
    errors: [{ path: "content_type", message: "must be a media type like text/plain (RFC 9110)" }],
  });
}

function requestBody(tool: Tool, args: Record<string, unknown>): string | undefined {
  if (tool.body === "none" || tool.body === "bytes") return undefined;
  if (tool.body === "nested") return JSON.stringify(args.body ?? {});
  const skip = new Set([...tool.pathParams, ...tool.queryKeys, "management_token"]);
  return JSON.stringify(Object.fromEntries(Object.entries(args).filter(([k]) => !skip.has(k))));
}

/**
 * Credentials of the internal request. The MCP bearer pays: as the bearer of a
 * create, as X-CREDIT-TOKEN beside the management token otherwise. A payment
 * in `_meta` is the caller's explicit choice for this call, so it replaces the
 * credit credential rather than racing it.
 */
function credentialHeaders(
  c: Context<AppEnv>,
  tool: Tool,
  located: Record<string, unknown>,
  payment: PaymentPayload | undefined,
): Headers {
  const headers = new Headers();
  for (const name of FORWARDED) {
    const value = c.req.header(name);
    if (value) headers.set(name, value);
  }
  const credit = payment ? null : bearer(c);
  if (tool.managed) {
    headers.set("Authorization", `Bearer ${String(located.management_token)}`);
    if (credit) headers.set("X-CREDIT-TOKEN", credit);
  } else if (credit) {
    headers.set("Authorization", `Bearer ${credit}`);
  }
  if (payment) {
    // x402 v1 travels in X-PAYMENT, v2 in PAYMENT-SIGNATURE: both are base64 JSON of the payload.
    headers.set(payment.x402Version === 1 ? "X-PAYMENT" : "PAYMENT-SIGNATURE", encodeHeader(payment));
  } else {
    for (const name of ["PAYMENT-SIGNATURE", "X-PAYMENT"]) {
      const value = c.req.header(name);
      if (value) headers.set(name, value);
    }
  }
  return headers;
}

/**
 * Stored bytes (a blob's content) come back base64-encoded. The tool asks for at most the first
 * MAX_TOOL_BYTES (a Range), so a larger object is answered, truncated and said so, not refused
 * after it was paid for; the rest is read over REST.
 */
const MAX_TOOL_BYTES = 1024 * 1024;

async function bytesResult(res: Response): Promise<ToolResult> {
  const bytes = new Uint8Array(await res.arrayBuffer());
  const total = Number(/\/(\d+)$/.exec(res.headers.get("content-range") ?? "")?.[1] ?? bytes.length);
  const content_type = res.headers.get("content-type") ?? "application/octet-stream";
  return result({ content_type, size: total, content_base64: toBase64(bytes), truncated: bytes.length < total }, false);
}

async function toToolResult(res: Response, tool: Tool): Promise<ToolResult> {
  if (res.ok && tool.returnsBytes) return bytesResult(res);
  const body = await readBody(res);
  if (res.ok) {
    const out = result(body, false);
    const settlement = res.headers.get("PAYMENT-RESPONSE") ?? res.headers.get("X-PAYMENT-RESPONSE");
    if (settlement) out._meta = { "x402/payment-response": decodeBase64Json(settlement) };
    return out;
  }
  // x402 MCP transport: a payment refusal carries the v2 PaymentRequired object, which the 402 has in its header.
  const required = res.status === 402 ? res.headers.get("PAYMENT-REQUIRED") : null;
  return required ? paymentRequired(decodeBase64Json(required), body) : result(body, true);
}

/**
 * x402's MCP transport (v2): the terms as structuredContent (a revision without it drops it, see
 * listing.ts) and, for every revision, as `content[0].text` in its `x402/error` wrapper, which
 * carries the problem's detail (why: no payment, a spent authorization, …) beside them.
 */
function paymentRequired(terms: unknown, problem: unknown): ToolResult {
  const detail = isRecord(problem) && typeof problem.detail === "string" ? problem.detail : "Payment required";
  const text = JSON.stringify({ "x402/error": { code: 402, message: detail, data: terms } });
  return { content: [{ type: "text", text }], ...(isRecord(terms) ? { structuredContent: terms } : {}), isError: true };
}

export async function callTool(
  app: AppFetch,
  c: Context<AppEnv>,
  tool: Tool,
  args: Record<string, unknown>,
  payment: PaymentPayload | undefined,
  /** Sent as Idempotency-Key (POST only), so a retried tool call runs once. */
  idempotencyKey?: string,
): Promise<ToolResult> {
  try {
    let located: Record<string, unknown> = {};
    if (tool.locator) {
      const parsed = tool.locator.safeParse(args);
      if (!parsed.success) return problemResult(validationError(parsed.error), c);
      located = parsed.data;
    }
    const headers = credentialHeaders(c, tool, located, payment);
    let body: string | Uint8Array | undefined = requestBody(tool, args);
    if (body !== undefined) headers.set("Content-Type", "application/json");
    if (tool.returnsBytes) headers.set("Range", `bytes=0-${MAX_TOOL_BYTES - 1}`);
    if (idempotencyKey && tool.method === "POST") headers.set("Idempotency-Key", idempotencyKey);
    if (tool.body === "bytes") {
      body = uploadBytes(args);
      headers.set("Content-Type", uploadType(args));
      headers.set("Content-Length", String(body.length));
    }
    // The MCP request was rate-limited where it came in; the internal one is not counted again.
    const request = countedAtEntry(
      new Request(buildUrl(c, tool, located, args), { method: tool.method, headers, body }),
    );
    return await toToolResult(await app.fetch(request, c.env, executionCtx(c)), tool);
  } catch (err) {
    // A refusal of this call (e.g. a malformed Authorization header) is a tool error, like any REST refusal.
    if (err instanceof AppError) return problemResult(err, c);
    throw err;
  }
}
