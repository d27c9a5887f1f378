/**
 * The tool catalogue, generated: the names come from the registry of kinds
 * (each tool is named after the operationId of the REST route it calls), and
 * the input schemas are JSON Schema of the very zod schemas that route
 * validates with, read from the app's route table. A tool therefore cannot
 * drift from its REST route: same path, same validation, same price.
 */
import { z, type OpenAPIHono, type RouteConfig } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import { allKinds } from "../resources/kinds";
import type { AnyKind } from "../kind/kind";
import { priceList, type PriceLine } from "../money/prices";
import { toolDescription } from "./descriptions";
import { hintsFor, titleFor, waitsFor, type Method, type ToolHints } from "./annotations";
import { asZod, objectParts, outputSchemaOf, toJsonSchema, type JsonSchema, type ObjectParts } from "./json-schema";

type ZodObject = z.ZodObject<z.ZodRawShape>;

export interface ToolInputSchema {
  type: "object";
  properties: Record<string, JsonSchema>;
  required?: string[];
  /** Cross-field rules of the route's schemas (oneOf, anyOf, not, dependentRequired), as JSON Schema states them. */
  [rule: string]: unknown;
}

/** What tools/list shows of a tool, before a revision picks the fields it has (listing.ts). */
export interface ToolFace {
  name: string;
  title: string;
  description: string;
  inputSchema: ToolInputSchema;
  /** The success answer's shape (structuredContent); absent when the answer is not one JSON object. */
  outputSchema?: JsonSchema;
  annotations: ToolHints;
}

export interface Tool extends ToolFace {
  method: Method;
  /** Path template of the REST route, `{param}` style. */
  path: string;
  /** Checked here before the path is built (an id like ".." must never become a path segment). */
  locator: ZodObject | null;
  pathParams: string[];
  queryKeys: string[];
  /**
   * "fields": the arguments are the JSON body; "nested": the body is `arguments.body` (a non-object body or a
   * name clash); "bytes": a raw upload, sent from `content_base64` with `content_type`.
   */
  body: "none" | "fields" | "nested" | "bytes";
  /** The management token authorizes; the MCP bearer credential pays (as X-CREDIT-TOKEN). */
  managed: boolean;
  /** The route answers stored bytes, not JSON: the result carries them base64-encoded. */
  returnsBytes: boolean;
  /** The call can take a while (a long-poll, a render): progress notifications are offered. */
  waits: boolean;
  /** A long-poll: its `wait_seconds` argument is the most it waits. */
  longPoll: boolean;
}

export type Catalogue = Map<string, Tool>;

const MANAGEMENT_TOKEN = "management_token";

const managementToken = z
  .string()
  .regex(/^\S+$/, "a single token, without spaces")
  .describe("The resource's management token (zvm_…), returned once when the resource was created.");

export const snake = (kind: string) => kind.replace(/-/g, "_");

/**
 * Route tools every connection lists: discovery of prices, the Ask, management, money and sandboxes (a
 * connection whose bearer is a sandbox's credit token creates in that sandbox and moves its clock).
 */
export const CORE_ROUTE_TOOLS = [
  "get_resource",
  "extend_resource",
  "export_resource",
  "cancel_resource",
  "list_deliveries",
  "retry_delivery",
  "list_prices",
  "get_balance",
  "buy_credits",
  "create_subtoken",
  "get_receipts",
  "request_feature",
  "create_sandbox",
  "move_sandbox_clock",
];

/**
 * Route tools called by name but not listed, so the list stays within 32 KB: a sandbox's view, timeline, delivery
 * log and end (a clock move answers what fired), and narrowed tokens (docs/mcp.md names them all).
 */
export const UNLISTED_ROUTE_TOOLS = [
  "get_sandbox",
  "sandbox_timeline",
  "sandbox_deliveries",
  "end_sandbox",
  "narrow_token",
  "list_tokens",
  "revoke_token",
];

/** A kind's typed tools, in listing order: its create, then its operations. */
export function kindToolNames(kind: AnyKind): string[] {
  const slug = snake(kind.kind);
  return [`create_${slug}`, ...kind.ops.map((op) => `${slug}_${op.name}`)];
}

function bodySchema(route: RouteConfig): z.ZodType | null {
  const content = route.request?.body?.content?.["application/json"];
  if (!content || !("schema" in content) || content.schema === undefined) return null;
  return asZod(content.schema, `${route.operationId} body`);
}

function isManaged(route: RouteConfig): boolean {
  return (route.security ?? []).some((requirement) => "management" in requirement);
}

interface Input {
  inputSchema: ToolInputSchema;
  queryKeys: string[];
  body: Tool["body"];
}

/** The tool's arguments: path parameters (and the management token), query and body fields, side by side. */
function inputOf(name: string, route: RouteConfig, locator: ZodObject | null): Input {
  const located = locator ? objectParts(locator) : null;
  const reserved = new Set(Object.keys(located?.properties ?? {}));
  const properties: Record<string, JsonSchema> = { ...located?.properties };
  const required = [...(located?.required ?? [])];
  const rules: JsonSchema[] = [];
  const add = (parts: ObjectParts) => {
    Object.assign(properties, parts.properties);
    required.push(...parts.required);
    if (parts.rules) rules.push(parts.rules);
  };

  const query = route.request?.query ? objectParts(asZod(route.request.query, `${name} query`)) : null;
  if (query) {
    const clash = Object.keys(query.properties).find((k) => reserved.has(k));
    if (clash) throw new Error(`${name}: query field "${clash}" clashes with a path parameter or ${MANAGEMENT_TOKEN}`);
    add(query);
  }
  const body = addBody(route, reserved, add, properties, required);
  const inputSchema: ToolInputSchema = {
    type: "object",
    properties,
    ...(required.length ? { required: [...new Set(required)] } : {}),
    ...(rules.length > 1 ? { allOf: rules } : rules[0]),
  };
  return { inputSchema, queryKeys: Object.keys(query?.properties ?? {}), body };
}

function addBody(
  route: RouteConfig,
  reserved: Set<string>,
  add: (parts: ObjectParts) => void,
  properties: Record<string, JsonSchema>,
  required: string[],
): Tool["body"] {
  const schema = bodySchema(route);
  if (route.request?.body?.content?.["application/octet-stream"]) {
    add({
      properties: {
        content_base64: {
          type: "string",
          description: "The bytes, base64-encoded (a tool call carries up to 1 MiB; upload more over REST).",
        },
        content_type: { type: "string", description: "Their media type (default application/octet-stream)." },
      },
      required: ["content_base64"],
    });
    return "bytes";
  }
  if (!schema) return "none";
  const fields = objectParts(schema);
  if (fields && !Object.keys(fields.properties).some((k) => reserved.has(k))) {
    add(fields);
    return "fields";
  }
  properties.body = toJsonSchema(schema);
  if (route.request?.body?.required) required.push("body");
  return "nested";
}

/** What a tool answering stored bytes puts in structuredContent (dispatch.ts bytesResult). */
const BYTES_OUTPUT: JsonSchema = {
  type: "object",
  properties: {
    content_type: { type: "string" },
    size: { type: "integer" },
    content_base64: { type: "string" },
    truncated: { type: "boolean" },
  },
  required: ["content_type", "size", "content_base64", "truncated"],
};

/** The route's success answer: stored bytes, or the JSON schema of its body (200, or 201 for a create). */
function successOf(route: RouteConfig): { bytes: boolean; outputSchema?: JsonSchema } {
  for (const status of [200, 201]) {
    const content = (route.responses?.[status] as { content?: Record<string, { schema?: unknown }> } | undefined)
      ?.content;
    if (!content) continue;
    if (content["application/octet-stream"]) return { bytes: true, outputSchema: BYTES_OUTPUT };
    const json = content["application/json"]?.schema;
    if (json !== undefined)
      return { bytes: false, outputSchema: outputSchemaOf(asZod(json, `${route.operationId} response`)) };
  }
  return { bytes: false };
}

function buildTool(name: string, route: RouteConfig, prices: PriceLine[]): Tool {
  const managed = isManaged(route);
  const params = route.request?.params ? asZod(route.request.params, `${name} params`) : null;
  if (params && !(params instanceof z.ZodObject)) throw new Error(`${name}: path parameters must be a zod object`);
  const locator = managed ? (params ?? z.object({})).safeExtend({ [MANAGEMENT_TOKEN]: managementToken }) : params;
  const { inputSchema, queryKeys, body } = inputOf(name, route, locator);
  const method = route.method.toUpperCase() as Method;
  const { bytes, outputSchema } = successOf(route);
  return {
    name,
    title: titleFor(name),
    description: toolDescription(route.summary ?? name, name, managed, prices),
    inputSchema,
    ...(outputSchema ? { outputSchema } : {}),
    annotations: hintsFor(name, method, inputSchema),
    method,
    path: route.path,
    locator,
    pathParams: [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? ""),
    queryKeys,
    body,
    managed,
    returnsBytes: bytes,
    ...waitsFor(name),
  };
}

/**
 * Every tool that stands for a REST route, by name, built from the routes registered on `app`;
 * a tool without its route is a bug, thrown here.
 */
export function buildRouteTools(app: OpenAPIHono<AppEnv>): Catalogue {
  const routes = new Map<string, RouteConfig>();
  for (const def of app.openAPIRegistry.definitions) {
    if (def.type === "route" && def.route.operationId) routes.set(def.route.operationId, def.route);
  }
  const prices = priceList();
  const catalogue: Catalogue = new Map();
  for (const name of [...CORE_ROUTE_TOOLS, ...UNLISTED_ROUTE_TOOLS, ...allKinds().flatMap(kindToolNames)]) {
    const route = routes.get(name);
    if (!route) throw new Error(`MCP tool ${name}: no REST route has operationId ${name}`);
    catalogue.set(name, buildTool(name, route, prices));
  }
  return catalogue;
}
