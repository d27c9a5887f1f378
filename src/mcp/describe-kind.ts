/**
 * describe_kind's answer (also a kind's MCP resource and the prompts' text): one kind's create and
 * operations with their tools' input schemas, examples and prices, read from the registry.
 */
import { DEFAULT_PUBLIC_BODY_BYTES } from "../kind/public-face";
import { methodsOf } from "../resources/public-route-match";
import type { AnyKind } from "../kind/kind";
import { microToUsd } from "../money/amounts";
import { snake, type Catalogue, type ToolInputSchema } from "./tools";

export const perDay = (kind: AnyKind) => microToUsd(kind.dayPriceMicro);

/** What call_operation takes apart from `input`: an operation's input is its tool's, without these. */
const LOCATOR = ["kind", "id", "management_token"];

function operationInput(schema: ToolInputSchema): ToolInputSchema {
  const properties = Object.fromEntries(Object.entries(schema.properties).filter(([name]) => !LOCATOR.includes(name)));
  const { required: all, ...rest } = schema;
  const required = (all ?? []).filter((name) => !LOCATOR.includes(name));
  return { ...rest, properties, ...(required.length ? { required } : {}) };
}

/** The delivery log of any kind's resource, reached through call_operation as two more operations. */
export const DELIVERY_TOOLS: Record<string, string> = {
  deliveries: "list_deliveries",
  retry_delivery: "retry_delivery",
};

/** Everything needed to use one kind (describe_kind's answer, and the kind's MCP resource). */
export function describeKind(kind: AnyKind, tools: Catalogue) {
  const slug = snake(kind.kind);
  const create = tools.get(`create_${slug}`)!;
  const operations = kind.ops.map((op) => {
    const tool = tools.get(`${slug}_${op.name}`)!;
    const example = op.example && {
      input: {
        ...op.example.params,
        ...op.example.input,
        ...(op.example.bytes !== undefined
          ? {
              content_base64: btoa(op.example.bytes),
              content_type: op.example.headers?.["content-type"] ?? "application/octet-stream",
            }
          : {}),
      },
      ...(op.example.after ? { after: op.example.after } : {}),
    };
    return {
      name: op.name,
      summary: op.summary,
      method: op.method.toUpperCase(),
      path: `/v1/${kind.kind}/{id}${op.path}`,
      price_usd: microToUsd(op.priceMicro),
      input_schema: operationInput(tool.inputSchema),
      ...(example ? { example } : {}),
      ...(op.servesObject
        ? { returns: "bytes: { content_type, size, content_base64, truncated } (the first MiB; the rest over REST)" }
        : {}),
    };
  });
  return {
    kind: kind.kind,
    family: kind.family,
    title: kind.title,
    summary: kind.summary,
    price_per_day_usd: perDay(kind),
    default_ttl_seconds: kind.defaultTtlSeconds,
    max_ttl_seconds: kind.maxTtlSeconds,
    limits: kind.limits ?? {},
    create: {
      input_schema: create.inputSchema,
      example: kind.example,
      price: `$${perDay(kind)} per started day of ttl_seconds`,
    },
    operations: [
      ...operations,
      ...Object.entries(DELIVERY_TOOLS).map(([name, toolName]) => {
        const tool = tools.get(toolName)!;
        return {
          name,
          summary: tool.description,
          method: tool.method,
          path: tool.path.replace("{kind}", kind.kind),
          price_usd: 0,
          input_schema: operationInput(tool.inputSchema),
        };
      }),
    ],
    ...(kind.sends ? { sends: kind.sends } : {}),
    ...(kind.public
      ? {
          public_address: kind.public.routes.map((r) => ({
            methods: methodsOf(r),
            path: `/p/{public_id}${r.path}`,
            summary: r.summary,
            max_body_bytes: r.maxBodyBytes ?? DEFAULT_PUBLIC_BODY_BYTES,
          })),
        }
      : {}),
    how:
      `Create with create_resource { kind: "${kind.kind}", input }; then call_operation { kind: "` +
      `${kind.kind}", id, management_token, operation, input }. ` +
      `Connect with ?toolsets=${kind.kind} for typed tools (create_${slug}, ${slug}_<operation>).`,
  };
}
