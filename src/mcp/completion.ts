/**
 * completion/complete: kind and operation names, wherever a client asks for them: the `use_kind`
 * prompt's arguments and the `{kind}` of the kind description template. An operation is completed
 * among the kind's already chosen (`context.arguments.kind`, 2025-06-18 on), else among all kinds'.
 */
import { z } from "@hono/zod-openapi";
import { allKinds, isKindName, KIND_NAMES, requireKind } from "../resources/kinds";
import { paramsOf, type MethodContext } from "./context";
import { RPC_ERRORS, RpcFault } from "./jsonrpc";
import { USE_KIND } from "./prompts";
import { KIND_TEMPLATE } from "./resources";

/** The spec's cap on values in one answer. */
const MAX_VALUES = 100;

const completeParams = z
  .object({
    ref: z.discriminatedUnion("type", [
      z.object({ type: z.literal("ref/prompt"), name: z.string() }).loose(),
      z.object({ type: z.literal("ref/resource"), uri: z.string() }).loose(),
    ]),
    argument: z.object({ name: z.string(), value: z.string().max(1000) }),
    context: z
      .object({ arguments: z.record(z.string(), z.string()).optional() })
      .loose()
      .optional(),
  })
  .loose();

const kindNames = () => [...KIND_NAMES];

function operationNames(kind: string | undefined): string[] {
  const chosen = kind && isKindName(kind) ? requireKind(kind) : undefined;
  const ops = chosen ? chosen.ops.map((op) => op.name) : allKinds().flatMap((k) => k.ops.map((op) => op.name));
  return [...new Set(ops)].sort();
}

function candidates(params: z.infer<typeof completeParams>): string[] {
  const { ref, argument, context } = params;
  if (ref.type === "ref/resource") {
    if (ref.uri !== KIND_TEMPLATE)
      throw new RpcFault(
        RPC_ERRORS.invalid_params,
        `Invalid params: no resource template ${ref.uri} (it is ${KIND_TEMPLATE}).`,
      );
    if (argument.name === "kind") return kindNames();
  } else {
    if (ref.name !== USE_KIND)
      throw new RpcFault(
        RPC_ERRORS.invalid_params,
        `Invalid params: no prompt named ${ref.name} (prompts/list names them).`,
      );
    if (argument.name === "kind") return kindNames();
    if (argument.name === "operation") return operationNames(context?.arguments?.kind);
  }
  throw new RpcFault(RPC_ERRORS.invalid_params, `Invalid params: nothing to complete for argument ${argument.name}.`);
}

export function complete(_ctx: MethodContext, params: unknown): Record<string, unknown> {
  const parsed = paramsOf(completeParams, params);
  const prefix = parsed.argument.value.toLowerCase();
  const matches = candidates(parsed).filter((name) => name.toLowerCase().startsWith(prefix));
  const values = matches.slice(0, MAX_VALUES);
  return { completion: { values, total: matches.length, hasMore: matches.length > values.length } };
}
