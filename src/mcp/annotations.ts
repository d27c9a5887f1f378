/**
 * What a client may assume of a tool before calling it, derived in this one place from what the
 * tool runs: the HTTP method of its route (GET reads; PUT and DELETE replace or remove, and are
 * idempotent; POST is neither), the operation's declaration in the registry (`destructive` for a
 * POST that discards data, `ready`/`prepare` for a call that waits), and the kind's (a kind that
 * `sends` or calls configured `targetFields` reaches the open world; so does an operation that
 * takes a `url` to fetch). Titles come from the kinds' titles and the operation names.
 */
import type { AnyKind } from "../kind/kind";
import type { AnyOp } from "../kind/op";
import { allKinds } from "../resources/kinds";
import type { JsonSchema } from "./json-schema";

export type Method = "GET" | "POST" | "PUT" | "DELETE";

/** MCP ToolAnnotations (2025-03-26 on): hints, all four always stated rather than left to the spec's defaults. */
export interface ToolHints {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

interface Declared {
  kind: AnyKind;
  /** Absent for the kind's create. */
  op?: AnyOp;
}

const snake = (kind: string) => kind.replace(/-/g, "_");

/** Made on first use: /mcp has every kind loaded by then (app.ts), not at the isolate's start. */
let declaredTools: Map<string, Declared> | undefined;
const declaredTool = (): Map<string, Declared> =>
  (declaredTools ??= new Map<string, Declared>(
    allKinds().flatMap((kind) => [
      [`create_${snake(kind.kind)}`, { kind }] as const,
      ...kind.ops.map((op) => [`${snake(kind.kind)}_${op.name}`, { kind, op }] as const),
    ]),
  ));

/**
 * Routes outside the kinds that reach beyond the service: buying credits settles on a chain, a retried delivery calls
 * its receiver.
 */
const OPEN_WORLD_ROUTES = new Set(["buy_credits", "retry_delivery"]);

/** Routes outside the kinds whose POST discards something. */
const DESTRUCTIVE_ROUTES = new Set(["cancel_resource"]);

const reachesOut = (kind: AnyKind) =>
  Boolean(kind.sends && Object.keys(kind.sends).length) || Boolean(kind.targetFields?.length);

export function hintsFor(name: string, method: Method, input: { properties?: Record<string, JsonSchema> }): ToolHints {
  const declared = declaredTool().get(name);
  const readOnly = method === "GET";
  const destructive =
    !readOnly &&
    (method === "PUT" || method === "DELETE" || DESTRUCTIVE_ROUTES.has(name) || declared?.op?.destructive === true);
  const fetchesUrl = input.properties !== undefined && "url" in input.properties && !readOnly;
  const openWorld = OPEN_WORLD_ROUTES.has(name) || (declared !== undefined && reachesOut(declared.kind)) || fetchesUrl;
  return {
    readOnlyHint: readOnly,
    destructiveHint: destructive,
    idempotentHint: method !== "POST",
    openWorldHint: openWorld,
  };
}

const humane = (snakeName: string) => snakeName.replace(/_/g, " ");
const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** A human title (2025-06-18's `title`): "Counter: increment", "Queue: create", "Get resource". */
export function titleFor(name: string): string {
  const declared = declaredTool().get(name);
  if (!declared) return capitalised(humane(name));
  return `${declared.kind.title}: ${declared.op ? humane(declared.op.name) : "create"}`;
}

/**
 * A call that can take a while: a long-poll (`ready`: it waits up to `wait_seconds` for a change)
 * or an operation with an asynchronous step (`prepare`: a render, a fetch, an upload). Those
 * answer with progress notifications when the client asks for them.
 */
export function waitsFor(name: string): { waits: boolean; longPoll: boolean } {
  const op = declaredTool().get(name)?.op;
  return { waits: Boolean(op?.ready || op?.prepare), longPoll: Boolean(op?.ready) };
}

/**
 * The generic tools run no route of their own: list_kinds and describe_kind read the registry;
 * create_resource and call_operation run any kind's create or operation, so they claim the most
 * any of those may do (call_operation may cancel, purge or call out).
 */
export const GENERIC_HINTS: Record<"list_kinds" | "describe_kind" | "create_resource" | "call_operation", ToolHints> = {
  list_kinds: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  describe_kind: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  create_resource: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  call_operation: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
};
