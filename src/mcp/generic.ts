/**
 * The generic tools: with these four an agent reaches every kind without loading
 * every kind's schema up front. list_kinds and describe_kind read the registry
 * (free, no credential); create_resource and call_operation run the kind's typed
 * tool, so the REST route it stands for validates, charges and fails exactly as
 * it would if called by name.
 */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { allKinds, FAMILIES, KIND_NAMES, requireKind } from "../resources/kinds";
import { AppError, validationError } from "../http/errors";
import { DELIVERY_TOOLS, describeKind, perDay } from "./describe-kind";
import { callTool, problemResult, result, type AppFetch, type PaymentPayload, type ToolResult } from "./dispatch";
import { snake, type Catalogue, type ToolFace, type ToolInputSchema } from "./tools";
import { toJsonSchema, type JsonSchema } from "./json-schema";
import { GENERIC_HINTS } from "./annotations";

export interface GenericContext {
  app: AppFetch;
  c: Context<AppEnv>;
  tools: Catalogue;
}

export interface GenericTool extends ToolFace {
  run(ctx: GenericContext, args: Record<string, unknown>, payment: PaymentPayload | undefined): Promise<ToolResult>;
}

const kindField = z
  .enum(KIND_NAMES as [string, ...string[]])
  .describe("The kind, as list_kinds names it (e.g. `counters`).");
const inputField = (what: string) => z.record(z.string(), z.unknown()).default({}).describe(what);
const idempotencyKey = z
  .string()
  .regex(/^[\x20-\x7e]{1,255}$/, "must be 1 to 255 printable ASCII characters")
  .optional()
  .describe(
    "Makes a retry safe: the same key with the same input within 24 h returns the first answer and charges " +
      "nothing again (a UUID is a good choice).",
  );

const listKindsInput = z.object({
  family: z.enum(FAMILIES).optional().describe("Only the kinds of this family."),
});
const describeKindInput = z.object({ kind: kindField });
const createInput = z.object({
  kind: kindField,
  input: inputField(
    "The create body: the fields of describe_kind's `create.input_schema` (with `ttl_seconds`, `label` and " +
      "`notify_url`).",
  ),
  idempotency_key: idempotencyKey,
});
const callInput = z.object({
  kind: kindField,
  id: z
    .string()
    .regex(/^r_[0-9A-Za-z]{22}$/, "must be a resource id (r_…)")
    .describe("The resource's id, from its create."),
  management_token: z
    .string()
    .regex(/^\S+$/, "a single token, without spaces")
    .describe("The resource's management token (zvm_…), returned once by its create."),
  operation: z
    .string()
    .regex(/^[a-z][a-z_]{0,63}$/, "an operation name, as describe_kind lists them")
    .describe("The operation, as describe_kind lists it (e.g. `increment`)."),
  input: inputField(
    "The operation's fields, body or query and path parameters together, as its `input_schema` in " +
      "describe_kind shows; for an upload, `content_base64` and `content_type`.",
  ),
  idempotency_key: idempotencyKey,
});

function parsed<T extends z.ZodType>(schema: T, args: Record<string, unknown>): z.infer<T> {
  const out = schema.safeParse(args);
  if (!out.success) throw validationError(out.error);
  return out.data;
}

const free = (body: unknown) => Promise.resolve(result(body, false));

/** A tool's JSON Schema, made when a tools/list first shows it rather than at every isolate's start. */
const inputSchemas = new WeakMap<z.ZodType, ToolInputSchema>();
function inputSchemaOf(schema: z.ZodType): ToolInputSchema {
  let json = inputSchemas.get(schema);
  if (!json) inputSchemas.set(schema, (json = toJsonSchema(schema) as ToolInputSchema));
  return json;
}

const listKindsOutput: JsonSchema = {
  type: "object",
  properties: {
    kinds: {
      type: "array",
      items: {
        type: "object",
        properties: {
          kind: { type: "string" },
          family: { type: "string" },
          operations: { type: "array", items: { type: "string" } },
        },
        required: ["kind", "family", "operations"],
      },
    },
  },
  required: ["kinds"],
};

const describeKindOutput: JsonSchema = {
  type: "object",
  properties: {
    kind: { type: "string" },
    family: { type: "string" },
    create: { type: "object" },
    operations: { type: "array", items: { type: "object" } },
    how: { type: "string" },
  },
  required: ["kind", "family", "create", "operations", "how"],
};

export const GENERIC_TOOLS: GenericTool[] = [
  {
    name: "list_kinds",
    title: "List kinds",
    annotations: GENERIC_HINTS.list_kinds,
    outputSchema: listKindsOutput,
    description:
      "The kinds of resource this service makes (what each is for, its day price and lifetime, its " +
      "operations). Free. Next: describe_kind.",
    get inputSchema() {
      return inputSchemaOf(listKindsInput);
    },
    run: (_ctx, args) => {
      const { family } = parsed(listKindsInput, args);
      const kinds = allKinds()
        .filter((k) => !family || k.family === family)
        .map((k) => ({
          kind: k.kind,
          family: k.family,
          title: k.title,
          summary: k.summary,
          price_per_day_usd: perDay(k),
          default_ttl_seconds: k.defaultTtlSeconds,
          max_ttl_seconds: k.maxTtlSeconds,
          operations: k.ops.map((op) => op.name),
        }));
      return free({ kinds });
    },
  },
  {
    name: "describe_kind",
    title: "Describe kind",
    annotations: GENERIC_HINTS.describe_kind,
    outputSchema: describeKindOutput,
    description:
      "Everything needed to use one kind: its create schema and example, each operation's input schema, " +
      "example and price, its limits and the events it sends. Free.",
    get inputSchema() {
      return inputSchemaOf(describeKindInput);
    },
    run: (ctx, args) => free(describeKind(requireKind(parsed(describeKindInput, args).kind), ctx.tools)),
  },
  {
    name: "create_resource",
    title: "Create resource",
    annotations: GENERIC_HINTS.create_resource,
    outputSchema: {
      type: "object",
      properties: { id: { type: "string" }, kind: { type: "string" }, management_token: { type: "string" } },
      required: ["id", "kind"],
    },
    description:
      "Create a resource of any kind (input as describe_kind shows). Costs the kind's day rate per started " +
      "day of ttl_seconds: paid by this connection's bearer credential or with x402 in " +
      '`_meta["x402/payment"]`. Returns the resource\'s `id` and its `management_token` once: keep both.',
    get inputSchema() {
      return inputSchemaOf(createInput);
    },
    run: (ctx, args, payment) => {
      const { kind, input, idempotency_key } = parsed(createInput, args);
      return callTool(ctx.app, ctx.c, ctx.tools.get(`create_${snake(kind)}`)!, input, payment, idempotency_key);
    },
  },
  {
    name: "call_operation",
    title: "Call operation",
    annotations: GENERIC_HINTS.call_operation,
    // Any operation of any kind: its answer is an object (stored bytes come as one too), nothing more can be said.
    outputSchema: { type: "object" },
    description:
      "Run an operation of a resource (as describe_kind lists them), with its `id` and `management_token`. " +
      "Costs the operation's price per call (deliveries are free): paid by this connection's bearer " +
      'credential or with x402 in `_meta["x402/payment"]`.',
    get inputSchema() {
      return inputSchemaOf(callInput);
    },
    run: (ctx, args, payment) => {
      const { kind, id, management_token, operation, input, idempotency_key } = parsed(callInput, args);
      const known = [...requireKind(kind).ops.map((op) => op.name), ...Object.keys(DELIVERY_TOOLS)];
      if (!known.includes(operation)) {
        throw new AppError(
          "validation_failed",
          `operation: ${kind} has no operation ${operation}; it has ${known.join(", ")}.`,
          { errors: [{ path: "operation", message: `must be one of ${known.join(", ")}` }] },
        );
      }
      const delivery = DELIVERY_TOOLS[operation];
      const tool = ctx.tools.get(delivery ?? `${snake(kind)}_${operation}`)!;
      return callTool(
        ctx.app,
        ctx.c,
        tool,
        { ...input, ...(delivery ? { kind } : {}), id, management_token },
        payment,
        idempotency_key,
      );
    },
  },
];

/** Runs a generic tool; a refusal of its own arguments is a tool error, as any REST refusal is. */
export async function runGeneric(
  tool: GenericTool,
  ctx: GenericContext,
  args: Record<string, unknown>,
  payment: PaymentPayload | undefined,
): Promise<ToolResult> {
  try {
    return await tool.run(ctx, args, payment);
  } catch (err) {
    if (err instanceof AppError) return problemResult(err, ctx.c);
    throw err;
  }
}
