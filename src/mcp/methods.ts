/** The MCP methods this server answers (API.md §13): initialize, ping, tools/list, tools/call. */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { callTool, type AppFetch } from "./dispatch";
import { RPC_ERRORS, RpcFault } from "./jsonrpc";
import { listed, type Catalogue } from "./tools";

/** seed-spec §9: the tool interface reports this version whatever the client asks for. */
export const PROTOCOL_VERSION = "2024-11-05";
export const SERVER_VERSION = "1.0.0";

const INSTRUCTIONS =
  "Persistence for AI agents: every resource lives for a TTL. Tools that do work are paid: send `Authorization: Bearer zv_…` " +
  "(a credit token) or an OAuth access token on this connection, or pay one call with x402 in `_meta[\"x402/payment\"]` " +
  "(a call without payment returns the terms). A create returns the resource's `management_token` once; pass it as " +
  "`management_token` to manage or operate on that resource. `list_prices` is free.";

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
  tools(): Catalogue;
}

function invalidParams(error: z.ZodError): RpcFault {
  const issue = error.issues[0];
  return new RpcFault(RPC_ERRORS.invalid_params, `Invalid params: ${issue?.path.join(".") || "params"}: ${issue?.message}`);
}

async function toolsCall(ctx: MethodContext, params: unknown): Promise<Record<string, unknown>> {
  const parsed = callParams.safeParse(params);
  if (!parsed.success) throw invalidParams(parsed.error);
  const { name, arguments: args = {}, _meta } = parsed.data;
  const tool = ctx.tools().get(name);
  if (!tool) throw new RpcFault(RPC_ERRORS.invalid_params, `Unknown tool: ${name}`);
  return callTool(ctx.app, ctx.c, tool, args, _meta?.["x402/payment"]);
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
      return { tools: [...ctx.tools().values()].map(listed) };
    case "tools/call":
      return toolsCall(ctx, params);
    default:
      throw new RpcFault(RPC_ERRORS.method_not_found, `Method not found: ${method}`);
  }
}
