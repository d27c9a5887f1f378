/**
 * JSON Schema of the routes' zod schemas, as MCP tools carry them: an input schema is what the
 * route validates (io "input": a field with a default is optional to the caller), an output
 * schema is what its success answer holds. Both come from the same zod the route uses, so a tool
 * cannot describe anything its route does not do.
 */
import { z } from "@hono/zod-openapi";

export type JsonSchema = Record<string, unknown>;

export function toJsonSchema(schema: z.ZodType, io: "input" | "output" = "input"): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as JsonSchema;
  return rest;
}

export function asZod(schema: unknown, where: string): z.ZodType {
  if (schema instanceof z.ZodType) return schema;
  throw new Error(`${where}: the MCP catalogue needs a zod schema`);
}

export interface ObjectParts {
  properties: Record<string, JsonSchema>;
  required: string[];
  /** Cross-field rules on the object itself (see openapi/schemas.ts). */
  rules?: JsonSchema;
}

const RULES = ["oneOf", "anyOf", "not", "dependentRequired"];

export function objectParts(schema: z.ZodType): ObjectParts | null {
  const json = toJsonSchema(schema);
  if (json.type !== "object" || typeof json.properties !== "object" || json.properties === null) return null;
  const rules = Object.fromEntries(RULES.filter((r) => json[r] !== undefined).map((r) => [r, json[r]]));
  return {
    properties: json.properties as Record<string, JsonSchema>,
    required: Array.isArray(json.required) ? (json.required as string[]) : [],
    ...(Object.keys(rules).length ? { rules } : {}),
  };
}

/**
 * Output schemas say what an answer holds, not that it holds nothing else: zod's output mode
 * closes every object (`additionalProperties: false`), and a client validating structuredContent
 * against that would fail the day a response gains a field. It also counts a field with a default
 * as always there, which parsing would make true, but a route answers its value unparsed: such a
 * field is not required. Field descriptions are dropped too: the REST reference has them, and
 * every tool list would carry them again.
 */
function opened(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(opened);
  if (typeof node !== "object" || node === null) return node;
  const schema = node as JsonSchema;
  const properties =
    typeof schema.properties === "object" && schema.properties !== null
      ? (schema.properties as Record<string, JsonSchema>)
      : {};
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "additionalProperties" && value === false) continue;
    if (key === "description" && typeof value === "string") continue;
    if (key === "required" && Array.isArray(value))
      out[key] = value.filter(
        (name) => !(typeof name === "string" && properties[name] && "default" in properties[name]),
      );
    else
      out[key] =
        key === "properties" || key === "$defs"
          ? Object.fromEntries(Object.entries(value as JsonSchema).map(([k, v]) => [k, opened(v)]))
          : opened(value);
  }
  return out;
}

const isObjectSchema = (s: unknown) => typeof s === "object" && s !== null && (s as JsonSchema).type === "object";

/**
 * A tool's outputSchema (2025-06-18 on), which MUST describe an object at its root: a union of
 * objects says so too; any other root (none of the routes has one) gets no output schema.
 */
export function outputSchemaOf(schema: z.ZodType): JsonSchema | undefined {
  const json = opened(toJsonSchema(schema, "output")) as JsonSchema;
  if (isObjectSchema(json)) return json;
  const branches = (json.anyOf ?? json.oneOf) as unknown[] | undefined;
  if (Array.isArray(branches) && branches.length > 0 && branches.every(isObjectSchema))
    return { type: "object", ...json };
  return undefined;
}
