/**
 * Create and data-plane routes for every kind in the registry (create-route.ts, op-route.ts): no kind writes its own
 * handlers. Built when a request first names the kind, from its manifest card before that.
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { H } from "hono/types";
import type { AppEnv } from "../env";
import type { AnyKind, KindCard } from "../kind/kind";
import { KIND_CARDS, loadKind } from "./kinds";
import { addDefinitions, documentLater } from "../openapi/deferred";
import { registerCreate } from "./create-route";
import { registerOp } from "./op-route";

/**
 * The documented paths each kind's own `routes` added (the notary's /v1/tsa/…), so its slice of the document keeps
 * them.
 */
const ownPaths = new Map<string, string[]>();
export const ownPathsOf = (kind: AnyKind): string[] => ownPaths.get(kind.kind) ?? [];

/**
 * A kind's routes as app.openapi would have registered them: each route's handlers (validators, then the handler) and
 * its OpenAPI entries.
 */
interface BuiltRoutes {
  chains: Map<string, H[]>;
  definitions: OpenAPIHono<AppEnv>["openAPIRegistry"]["definitions"];
}

const honoPath = (path: string) => path.replaceAll(/\/{(.+?)}/g, "/:$1");

/**
 * Registers every kind's routes (its own first: a fixed path such as /v1/notify/channels must win over
 * /v1/{kind}/{id}; then its create and its operations), each with its method and path from the kind
 * manifest and a handler that builds the kind's routes when one of them is first called: the kind's module
 * loaded, its schemas derived, its validators made and its OpenAPI entries written, on a scratch app with
 * the same hook, by the same code as before. The request then runs the route's own handlers on its own
 * context, so routing, middleware and answers are what they were. The OpenAPI entries join the document,
 * where they were declared, when it is first built (openapi/deferred.ts).
 */
export function registerKindRoutes(app: OpenAPIHono<AppEnv>): void {
  const built = new Map<string, Promise<BuiltRoutes>>();
  const build = (card: KindCard) => {
    let routes = built.get(card.kind);
    if (!routes) built.set(card.kind, (routes = loadKind(card.kind).then((kind) => buildRoutes(app, kind))));
    return routes;
  };
  for (const card of KIND_CARDS) {
    const routes = [
      ...card.ownRoutes,
      { method: "post" as const, path: `/v1/${card.kind}` },
      ...card.ops.map((op) => ({ method: op.method, path: `/v1/${card.kind}/{id}${op.path}` })),
    ];
    for (const { method, path } of routes) {
      const key = `${method.toUpperCase()} ${honoPath(path)}`;
      let chain: H[] | undefined;
      // One parameter: a handler, not a middleware (operator/request-facts.ts names the route by the first handler).
      app.on(method.toUpperCase(), honoPath(path), async (c: Context<AppEnv>) => {
        chain ??= (await build(card)).chains.get(key);
        if (!chain) throw new Error(`${card.kind}: the manifest's route ${key} is not the kind's (npm run manifests)`);
        return runChain(c, chain);
      });
    }
  }
  documentLater(app, async (registry) => {
    for (const card of KIND_CARDS) addDefinitions(registry, (await build(card)).definitions);
  });
}

function buildRoutes(app: OpenAPIHono<AppEnv>, kind: AnyKind): BuiltRoutes {
  const scratch = new OpenAPIHono<AppEnv>({ defaultHook: app.defaultHook });
  kind.routes?.(scratch);
  ownPaths.set(
    kind.kind,
    scratch.openAPIRegistry.definitions.flatMap((d) => (d.type === "route" ? [d.route.path] : [])),
  );
  registerCreate(scratch, kind);
  for (const op of kind.ops) registerOp(scratch, kind, op);
  const chains = new Map<string, H[]>();
  for (const route of scratch.routes) {
    const key = `${route.method} ${route.path}`;
    chains.set(key, [...(chains.get(key) ?? []), route.handler]);
  }
  return { chains, definitions: scratch.openAPIRegistry.definitions };
}

/**
 * Runs one route's handlers on the request's context as Hono's compose would: each middleware's `next` is the
 * one after it, an answer returned becomes the response, and an error goes up to the app's onError.
 */
async function runChain(c: Context<AppEnv>, chain: H[]): Promise<Response> {
  const step = async (i: number): Promise<void> => {
    const res: unknown = await chain[i]!(c, () => step(i + 1));
    if (res instanceof Response && !c.finalized) c.res = res;
  };
  await step(0);
  return c.res;
}
