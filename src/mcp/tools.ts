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
import type { AnyKind } from "../resources/kind";
import { priceList, type PriceLine } from "../money/prices";
import { toolDescription } from "./descriptions";

type Method = "GET" | "POST" | "PUT" | "DELETE";
type ZodObject = z.ZodObject<z.ZodRawShape>;
type JsonSchema = Record<string, unknown>;

export interface ToolInputSchema {
  type: "object";
  properties: Record<string, JsonSchema>;
  required?: string[];
  /** Cross-field rules of the route's schemas (oneOf, anyOf, not, dependentRequired), as JSON Schema states them. */
  [rule: string]: unknown;
}

export interface Tool {
  name: string;
  description: string;
  inputSchema: ToolInputSchema;
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
}

export type Catalogue = Map<string, Tool>;

const MANAGEMENT_TOKEN = "management_token";

const managementToken = z
  .string()
  .regex(/^\S+$/, "a single token, without spaces")
  .describe("The resource's management token (zvm_…), returned once when the resource was created.");

export const snake = (kind: string) => kind.replace(/-/g, "_");

/** Route tools every connection lists: discovery of prices, the Ask, management and money. */
export const CORE_ROUTE_TOOLS = [
  "get_resource", "extend_resource", "export_resource", "cancel_resource", "list_deliveries", "retry_delivery",
  "list_prices", "get_balance", "buy_credits", "create_subtoken", "get_receipts", "request_feature",
];

/** A kind's typed tools, in listing order: its create, then its operations. */
export function kindToolNames(kind: AnyKind): string[] {
  const slug = snake(kind.kind);
  return [`create_${slug}`, ...kind.ops.map((op) => `${slug}_${op.name}`)];
}

export function toJsonSchema(schema: z.ZodType): JsonSchema {
  // io "input": a field with a default is optional to the caller, as in the REST body.
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as JsonSchema;
  return rest;
}

function asZod(schema: unknown, where: string): z.ZodType {
  if (schema instanceof z.ZodType) return schema;
  throw new Error(`${where}: the MCP catalogue needs a zod schema`);
}

interface ObjectParts {
  properties: Record<string, JsonSchema>;
  required: string[];
  /** Cross-field rules on the object itself (see openapi/schemas.ts). */
  rules?: JsonSchema;
}

const RULES = ["oneOf", "anyOf", "not", "dependentRequired"];

function objectParts(schema: z.ZodType): ObjectParts | null {
  const json = toJsonSchema(schema);
  if (json.type !== "object" || typeof json.properties !== "object" || json.properties === null) return null;
  const rules = Object.fromEntries(RULES.filter((r) => json[r] !== undefined).map((r) => [r, json[r]]));
  return {
    properties: json.properties as Record<string, JsonSchema>,
    required: Array.isArray(json.required) ? (json.required as string[]) : [],
    ...(Object.keys(rules).length ? { rules } : {}),
  };
}

function bodySchema(route: RouteConfig): z.ZodType | null {
  const content = route.request?.body?.content?.["application/json"];
  if (!content || !("schema" in content) || content.schema === undefined) return null;
  return asZod(content.schema, `${route.operationId} body`);
}

function isManaged(route: RouteConfig): boolean {
  return (route.security ?? []).some((requirement) => "management" in requirement);
}

function buildTool(name: string, route: RouteConfig, prices: PriceLine[]): Tool {
  const managed = isManaged(route);
  const params = route.request?.params ? asZod(route.request.params, `${name} params`) : null;
  if (params && !(params instanceof z.ZodObject)) throw new Error(`${name}: path parameters must be a zod object`);
  const locator = managed ? (params ?? z.object({})).safeExtend({ [MANAGEMENT_TOKEN]: managementToken }) : params;
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

  let body: Tool["body"] = "none";
  const schema = bodySchema(route);
  if (route.request?.body?.content?.["application/octet-stream"]) {
    body = "bytes";
    add({
      properties: {
        content_base64: { type: "string", description: "The bytes, base64-encoded (a tool call carries up to 1 MiB; upload more over REST)." },
        content_type: { type: "string", description: "Their media type (default application/octet-stream)." },
      },
      required: ["content_base64"],
    });
  } else if (schema) {
    const fields = objectParts(schema);
    if (fields && !Object.keys(fields.properties).some((k) => reserved.has(k))) {
      body = "fields";
      add(fields);
    } else {
      body = "nested";
      properties.body = toJsonSchema(schema);
      if (route.request?.body?.required) required.push("body");
    }
  }

  return {
    name,
    description: toolDescription(route.summary ?? name, name, managed, prices),
    inputSchema: {
      type: "object", properties, ...(required.length ? { required: [...new Set(required)] } : {}),
      ...(rules.length > 1 ? { allOf: rules } : rules[0]),
    },
    method: route.method.toUpperCase() as Method,
    path: route.path,
    locator,
    pathParams: [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? ""),
    queryKeys: Object.keys(query?.properties ?? {}),
    body,
    managed,
    returnsBytes: Boolean((route.responses?.[200] as { content?: Record<string, unknown> } | undefined)?.content?.["application/octet-stream"]),
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
  for (const name of [...CORE_ROUTE_TOOLS, ...allKinds().flatMap(kindToolNames)]) {
    const route = routes.get(name);
    if (!route) throw new Error(`MCP tool ${name}: no REST route has operationId ${name}`);
    catalogue.set(name, buildTool(name, route, prices));
  }
  return catalogue;
}

/** The `tools/list` view of a tool. */
export function listed(tool: Pick<Tool, "name" | "description" | "inputSchema">) {
  return { name: tool.name, description: tool.description, inputSchema: tool.inputSchema };
}
