/**
 * tools/call: finds the tool (generic or a route's), runs it, and shapes its result for the
 * revision. Payment rides the call as it does on REST: this request's bearer credential, an
 * x402 header, or `_meta["x402/payment"]` (x402's MCP transport); an unpaid paid call is a tool
 * error carrying the x402 terms, in every revision, so the client pays and sends the same call again.
 */
import { z } from "@hono/zod-openapi";
import { paramsOf, type MethodContext } from "./context";
import { callTool, type ToolResult } from "./dispatch";
import { GENERIC_TOOLS, runGeneric } from "./generic";
import { RPC_ERRORS, RpcFault } from "./jsonrpc";
import { resultView } from "./listing";
import { withProgress } from "./progress";
import { snake, type Tool } from "./tools";

const progressToken = z.union([z.string(), z.int()]);

// Loose: 2026-07-28's inputResponses and requestState answer questions this server never asks, and are ignored.
const callParams = z
  .object({
    name: z.string().min(1),
    arguments: z.record(z.string(), z.unknown()).optional(),
    _meta: z
      .object({
        "x402/payment": z
          .record(z.string(), z.unknown())
          .optional()
          .describe("x402 PaymentPayload object (x402 MCP transport), not its base64 header form."),
        progressToken: progressToken.optional(),
      })
      .loose()
      .optional(),
  })
  .loose();

/** The route tool a call runs, when it is one: a typed tool by name, or call_operation's kind and operation. */
function routeToolOf(ctx: MethodContext, name: string, args: Record<string, unknown>): Tool | undefined {
  if (name !== "call_operation") return ctx.tools().get(name);
  if (typeof args.kind !== "string" || typeof args.operation !== "string") return undefined;
  return ctx.tools().get(`${snake(args.kind)}_${args.operation}`);
}

/**
 * Whether this call, as sent, should answer with progress: the client asked (a progressToken) and
 * the tool waits. `total` is a long-poll's `wait_seconds`, the most it can wait.
 */
export function progressOf(
  ctx: MethodContext,
  params: unknown,
): { token: string | number; total: number | undefined } | null {
  const parsed = callParams.safeParse(params);
  const token = parsed.success ? parsed.data._meta?.progressToken : undefined;
  if (!parsed.success || token === undefined) return null;
  const args = parsed.data.arguments ?? {};
  const tool = routeToolOf(ctx, parsed.data.name, args);
  if (!tool?.waits) return null;
  const input =
    parsed.data.name === "call_operation" && typeof args.input === "object" && args.input !== null
      ? (args.input as Record<string, unknown>)
      : args;
  const wait = input.wait_seconds;
  return { token, total: tool.longPoll && typeof wait === "number" && wait > 0 ? wait : undefined };
}

async function run(ctx: MethodContext, params: z.infer<typeof callParams>): Promise<ToolResult> {
  const { name, arguments: args = {}, _meta } = params;
  const payment = _meta?.["x402/payment"];
  const generic = GENERIC_TOOLS.find((t) => t.name === name);
  if (generic) return runGeneric(generic, { app: ctx.app, c: ctx.c, tools: ctx.tools() }, args, payment);
  const tool = ctx.tools().get(name);
  // Unknown tools are a protocol error (tools spec); a bad argument of a known one is a tool error the model can read.
  if (!tool)
    throw new RpcFault(
      RPC_ERRORS.invalid_params,
      `Unknown tool: ${name} (tools/list names them; any kind's typed tool may be called by name).`,
    );
  return callTool(ctx.app, ctx.c, tool, args, payment);
}

export async function toolsCall(ctx: MethodContext, params: unknown): Promise<Record<string, unknown>> {
  const parsed = paramsOf(callParams, params);
  const streaming = ctx.progress ? progressOf(ctx, params) : null;
  const out =
    streaming && ctx.progress
      ? await withProgress(ctx.progress, streaming.total, () => run(ctx, parsed))
      : await run(ctx, parsed);
  return resultView(out, ctx.revision);
}
