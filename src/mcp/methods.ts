/** The MCP methods this server answers (API.md §13): initialize, ping, tools/list, tools/call. */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { callTool, type AppFetch } from "./dispatch";
import { RPC_ERRORS, RpcFault } from "./jsonrpc";
import { listed, type Catalogue } from "./tools";
import { GENERIC_TOOLS, runGeneric } from "./generic";
import { listedToolNames } from "./toolsets";
import type { AnyKind } from "../resources/kind";

/** seed-spec §9: the tool interface reports this version whatever the client asks for. */
export const PROTOCOL_VERSION = "2024-11-05";
export const SERVER_VERSION = "1.0.0";

const INSTRUCTIONS =
  "Persistence for AI agents: every resource lives for a TTL. Start with list_kinds, then describe_kind for one kind's " +
  "schemas, examples and prices; create_resource makes one (its `management_token` is returned once: keep it) and " +
  "call_operation runs its operations. Tools that do work are paid: send `Authorization: Bearer zv_…` (a credit token) " +
  "or an OAuth access token on this connection, or pay one call with x402 in `_meta[\"x402/payment\"]` (a call without " +
  "payment returns the terms); buy_credits buys a credit token with x402. list_prices, list_kinds and describe_kind are free. " +
  "For typed tools of chosen kinds (create_<kind>, <kind>_<operation>), connect to /mcp?toolsets=<family or kind>,… " +
  "(families: time, address, memory, place, watching, utilities; or all).";

const callParams = z.object({
  name: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()).optional(),
  _meta: z
    .object({
      "x402/payment": z
        .record(z.string(), z.unknown())
        .optional()
        .describe("x402 PaymentPayload object (x402 MCP transport), not its base64 header form."),
    })
    .optional(),
});

export interface MethodContext {
  app: AppFetch;
  c: Context<AppEnv>;
  /** Every route tool, listed or not. */
  tools(): Catalogue;
  /** The kinds whose typed tools this connection lists (`?toolsets=`). */
  kinds: AnyKind[];
}

function invalidParams(error: z.ZodError): RpcFault {
  const issue = error.issues[0];
  return new RpcFault(RPC_ERRORS.invalid_params, `Invalid params: ${issue?.path.join(".") || "params"}: ${issue?.message}`);
}

async function toolsCall(ctx: MethodContext, params: unknown): Promise<Record<string, unknown>> {
  const parsed = callParams.safeParse(params);
  if (!parsed.success) throw invalidParams(parsed.error);
  const { name, arguments: args = {}, _meta } = parsed.data;
  const payment = _meta?.["x402/payment"];
  const generic = GENERIC_TOOLS.find((t) => t.name === name);
  if (generic) return runGeneric(generic, { app: ctx.app, c: ctx.c, tools: ctx.tools() }, args, payment);
  const tool = ctx.tools().get(name);
  if (!tool) throw new RpcFault(RPC_ERRORS.invalid_params, `Unknown tool: ${name}`);
  return callTool(ctx.app, ctx.c, tool, args, payment);
}

export async function runMethod(ctx: MethodContext, method: string, params: unknown): Promise<Record<string, unknown>> {
  switch (method) {
    case "initialize":
      return {
        protocolVersion: PROTOCOL_VERSION,
        capabilities: { tools: { listChanged: false } },
        serverInfo: { name: ctx.c.env.SERVICE_NAME, version: SERVER_VERSION },
        instructions: INSTRUCTIONS,
      };
    case "ping":
      return {};
    case "tools/list":
      return { tools: listedToolNames(ctx.kinds).map((name) => listed(GENERIC_TOOLS.find((t) => t.name === name) ?? ctx.tools().get(name)!)) };
    case "tools/call":
      return toolsCall(ctx, params);
    default:
      throw new RpcFault(RPC_ERRORS.method_not_found, `Method not found: ${method}`);
  }
}
