/**
 * MCP resources: what an agent may read before it calls anything, all free and all derived from
 * what the REST side already serves: `/llms.txt`, the price list (read through the list_prices
 * tool, so it is the REST answer itself), and each kind's description (describe_kind's answer).
 * A kind's description is also a template, `zeitvault://kinds/{kind}`, which completion fills in.
 */
import { z } from "@hono/zod-openapi";
import { llmsTxt } from "../openapi/llms";
import { allKinds, isKindName, requireKind } from "../resources/kinds";
import { paramsOf, type MethodContext } from "./context";
import { callTool } from "./dispatch";
import { describeKind } from "./describe-kind";
import { RpcFault } from "./jsonrpc";
import { listParams, page } from "./pagination";
import { features } from "./revisions";
import { icons } from "./server-info";

export const SCHEME = "zeitvault://";
export const KIND_TEMPLATE = `${SCHEME}kinds/{kind}`;

interface Listed {
  uri: string;
  name: string;
  title: string;
  description: string;
  mimeType: string;
}

const FIXED: Listed[] = [
  {
    uri: `${SCHEME}llms.txt`,
    name: "llms.txt",
    title: "About this service (llms.txt)",
    description: "What the service is, how to pay, and one line per kind: the page an agent reads first.",
    mimeType: "text/markdown",
  },
  {
    uri: `${SCHEME}prices`,
    name: "prices",
    title: "Price list",
    description: "Every charge of the service, with each kind's limits (the list_prices tool's answer).",
    mimeType: "application/json",
  },
];

const kindUri = (kind: string) => `${SCHEME}kinds/${kind}`;

function catalogue(): Listed[] {
  return [
    ...FIXED,
    ...allKinds().map((k) => ({
      uri: kindUri(k.kind),
      name: k.kind,
      title: k.title,
      description: `${k.summary} Its schemas, examples, prices and operations (describe_kind's answer).`,
      mimeType: "application/json",
    })),
  ];
}

/** A listed item as the revision shows it: `title` from 2025-06-18, icons from 2025-11-25. */
function shown<T extends { title: string }>(ctx: MethodContext, item: T): Omit<T, "title"> & Record<string, unknown> {
  const f = features(ctx.revision);
  const { title, ...rest } = item;
  return { ...rest, ...(f.structured ? { title } : {}), ...(f.icons ? { icons: icons(ctx.c) } : {}) };
}

export function listResources(ctx: MethodContext, params: unknown): Record<string, unknown> {
  const { items, nextCursor } = page(catalogue(), paramsOf(listParams, params)?.cursor);
  return { resources: items.map((item) => shown(ctx, item)), ...(nextCursor ? { nextCursor } : {}) };
}

export function listTemplates(ctx: MethodContext, params: unknown): Record<string, unknown> {
  paramsOf(listParams, params);
  const template = {
    uriTemplate: KIND_TEMPLATE,
    name: "kind",
    title: "A kind's description",
    description: "Schemas, examples, prices and operations of one kind ({kind}: as list_kinds names it).",
    mimeType: "application/json",
  };
  return { resourceTemplates: [shown(ctx, template)] };
}

const readParams = z.object({ uri: z.string().min(1).max(2048) }).loose();

async function contentOf(ctx: MethodContext, uri: string): Promise<{ mimeType: string; text: string } | null> {
  if (uri === `${SCHEME}llms.txt`) return { mimeType: "text/markdown", text: llmsTxt(ctx.c) };
  if (uri === `${SCHEME}prices`) {
    const prices = await callTool(ctx.app, ctx.c, ctx.tools().get("list_prices")!, {}, undefined);
    if (prices.isError) throw new Error(`list_prices failed: ${prices.content[0]?.text}`);
    return { mimeType: "application/json", text: prices.content[0]!.text };
  }
  const name = uri.startsWith(`${SCHEME}kinds/`) ? uri.slice(`${SCHEME}kinds/`.length) : undefined;
  const kind = name !== undefined && isKindName(name) ? requireKind(name) : undefined;
  return kind ? { mimeType: "application/json", text: JSON.stringify(describeKind(kind, ctx.tools())) } : null;
}

export async function readResource(ctx: MethodContext, params: unknown): Promise<Record<string, unknown>> {
  const { uri } = paramsOf(readParams, params);
  const content = await contentOf(ctx, uri);
  if (!content) {
    // 2025-11-25 and earlier call this -32002; 2026-07-28 makes it Invalid params.
    throw new RpcFault(
      features(ctx.revision).resourceNotFoundCode,
      `Resource not found: ${uri} (resources/list names them; kinds are ${KIND_TEMPLATE}).`,
      { uri },
    );
  }
  return { contents: [{ uri, ...content }] };
}
