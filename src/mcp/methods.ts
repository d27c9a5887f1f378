/**
 * The MCP methods this server answers, and in which era: `initialize`, `ping` and
 * `logging/setLevel` belong to the handshake revisions (2026-07-28 removed them, and answers
 * them -32601 with HTTP 404), `server/discover` to 2026-07-28; the rest to every revision, each
 * shaping its result for the revision it is asked in.
 */
import { z } from "@hono/zod-openapi";
import { toolsCall } from "./calls";
import { complete } from "./completion";
import { paramsOf, type MethodContext } from "./context";
import { GENERIC_TOOLS } from "./generic";
import { RPC_ERRORS, RpcFault } from "./jsonrpc";
import { toolView } from "./listing";
import { decorate } from "./modern";
import { listParams, page } from "./pagination";
import { getPrompt, listPrompts } from "./prompts";
import { listResources, listTemplates, readResource } from "./resources";
import { features, negotiate, REVISIONS } from "./revisions";
import { capabilities, icons, INSTRUCTIONS, serverInfo } from "./server-info";
import { listedToolNames } from "./toolsets";

type Result = Record<string, unknown> | Promise<Record<string, unknown>>;

interface MethodSpec {
  era: "legacy" | "modern" | "both";
  run(ctx: MethodContext, params: unknown): Result;
}

const initializeParams = z
  .object({
    protocolVersion: z.string().min(1).max(64),
    capabilities: z.record(z.string(), z.unknown()).optional(),
    clientInfo: z.object({ name: z.string(), version: z.string() }).loose().optional(),
  })
  .loose();

function initialize(ctx: MethodContext, params: unknown): Result {
  const { protocolVersion } = paramsOf(initializeParams, params);
  const revision = negotiate(protocolVersion);
  return {
    protocolVersion: revision,
    capabilities: capabilities(revision),
    serverInfo: serverInfo(ctx.c, revision),
    instructions: INSTRUCTIONS,
  };
}

/**
 * server/discover (2026-07-28): every version served, the modern capabilities; the identity rides `_meta` (decorate).
 */
function discover(ctx: MethodContext, params: unknown): Result {
  paramsOf(z.object({}).loose().optional(), params);
  return { supportedVersions: [...REVISIONS], capabilities: capabilities(ctx.revision), instructions: INSTRUCTIONS };
}

const levels = z
  .object({ level: z.enum(["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]) })
  .loose();

/**
 * Accepted and honoured trivially: this server sends no log messages at any level. (Stateless, it
 * could not remember a level for a later request either; 2026-07-28 moved the level into each request.)
 */
function setLevel(_ctx: MethodContext, params: unknown): Result {
  paramsOf(levels, params);
  return {};
}

function listTools(ctx: MethodContext, params: unknown): Result {
  const names = listedToolNames(ctx.kinds);
  const { items, nextCursor } = page(names, paramsOf(listParams, params)?.cursor);
  const shared = features(ctx.revision).icons ? icons(ctx.c) : [];
  const tools = items.map((name) =>
    toolView(GENERIC_TOOLS.find((t) => t.name === name) ?? ctx.tools().get(name)!, ctx.revision, shared),
  );
  return { tools, ...(nextCursor ? { nextCursor } : {}) };
}

const METHODS: Record<string, MethodSpec> = {
  initialize: { era: "legacy", run: initialize },
  ping: { era: "legacy", run: () => ({}) },
  "logging/setLevel": { era: "legacy", run: setLevel },
  "server/discover": { era: "modern", run: discover },
  "tools/list": { era: "both", run: listTools },
  "tools/call": { era: "both", run: toolsCall },
  "resources/list": { era: "both", run: listResources },
  "resources/templates/list": { era: "both", run: listTemplates },
  "resources/read": { era: "both", run: readResource },
  "prompts/list": { era: "both", run: listPrompts },
  "prompts/get": { era: "both", run: getPrompt },
  "completion/complete": { era: "both", run: complete },
};

/** Whether `method` is one this revision has here (2026-07-28 answers an unknown one with HTTP 404). */
export function knownMethod(method: string, modern: boolean): boolean {
  const spec = Object.hasOwn(METHODS, method) ? METHODS[method] : undefined;
  return spec !== undefined && (spec.era === "both" || spec.era === (modern ? "modern" : "legacy"));
}

export async function runMethod(ctx: MethodContext, method: string, params: unknown): Promise<Record<string, unknown>> {
  const modern = features(ctx.revision).modern;
  if (!knownMethod(method, modern)) {
    const removed =
      modern && Object.hasOwn(METHODS, method) ? ` (${method} is not part of protocol ${ctx.revision})` : "";
    throw new RpcFault(
      RPC_ERRORS.method_not_found,
      `Method not found: ${method}${removed}`,
      undefined,
      modern ? 404 : undefined,
    );
  }
  const result = await METHODS[method]!.run(ctx, params);
  return modern ? decorate(method, result, serverInfo(ctx.c, ctx.revision)) : result;
}
