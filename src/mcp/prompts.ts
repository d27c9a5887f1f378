/**
 * One prompt, `use_kind`: what a person picks (a slash command in most clients) to set the model
 * up for one kind, with the kind's description embedded as a resource. Its arguments are what
 * completion/complete completes: a kind, then one of that kind's operations.
 */
import { z } from "@hono/zod-openapi";
import { isKindName, requireKind } from "../resources/kinds";
import { paramsOf, type MethodContext } from "./context";
import { describeKind } from "./describe-kind";
import { RPC_ERRORS, RpcFault } from "./jsonrpc";
import { listParams } from "./pagination";
import { SCHEME } from "./resources";
import { features } from "./revisions";
import { icons } from "./server-info";
import { snake } from "./tools";

export const USE_KIND = "use_kind";

const PROMPT = {
  name: USE_KIND,
  title: "Use a kind",
  description:
    "Set the model up to use one kind of resource: what it is, its schemas, prices and operations, and " +
    "which tools reach it.",
  arguments: [
    { name: "kind", description: "The kind, as list_kinds names it (e.g. counters).", required: true },
    { name: "operation", description: "One of the kind's operations to focus on (optional).", required: false },
  ],
};

export function listPrompts(ctx: MethodContext, params: unknown): Record<string, unknown> {
  paramsOf(listParams, params);
  const f = features(ctx.revision);
  const { title, ...rest } = PROMPT;
  return { prompts: [{ ...rest, ...(f.structured ? { title } : {}), ...(f.icons ? { icons: icons(ctx.c) } : {}) }] };
}

const getParams = z
  .object({
    name: z.string(),
    arguments: z.record(z.string(), z.string()).optional(),
  })
  .loose();

const invalid = (message: string) => new RpcFault(RPC_ERRORS.invalid_params, `Invalid params: ${message}`);

export function getPrompt(ctx: MethodContext, params: unknown): Record<string, unknown> {
  const { name, arguments: args = {} } = paramsOf(getParams, params);
  if (name !== USE_KIND) throw invalid(`no prompt named ${name} (prompts/list names them).`);
  if (!args.kind) throw invalid("arguments.kind is required.");
  if (!isKindName(args.kind)) throw invalid(`arguments.kind: no kind ${args.kind} (list_kinds names them).`);
  const kind = requireKind(args.kind);
  const op = args.operation ? kind.ops.find((o) => o.name === args.operation) : undefined;
  if (args.operation && !op)
    throw invalid(
      `arguments.operation: ${kind.kind} has no operation ${args.operation}; it has ` +
        `${kind.ops.map((o) => o.name).join(", ")}.`,
    );
  const slug = snake(kind.kind);
  const focus = op ? ` Focus on its \`${op.name}\` operation: ${op.summary}.` : "";
  const text =
    `Use the ${kind.title} kind (\`${kind.kind}\`) of ${ctx.c.env.SERVICE_NAME}: ${kind.summary}${focus}` +
    ` Its description follows. ` +
    `Create one with create_resource { kind: "${kind.kind}", input } and keep its id and management_token; ` +
    `run its operations with ` +
    `call_operation { kind: "${kind.kind}", id, management_token, operation, input } (or the typed tools ` +
    `create_${slug} and ${slug}_<operation> ` +
    `when connected with ?toolsets=${kind.kind}). Paid calls are paid by this connection's credential or ` +
    `x402 in _meta["x402/payment"].`;
  return {
    description: `Use the ${kind.title} kind`,
    messages: [
      { role: "user", content: { type: "text", text } },
      {
        role: "user",
        content: {
          type: "resource",
          resource: {
            uri: `${SCHEME}kinds/${kind.kind}`,
            mimeType: "application/json",
            text: JSON.stringify(describeKind(kind, ctx.tools())),
          },
        },
      },
    ],
  };
}
