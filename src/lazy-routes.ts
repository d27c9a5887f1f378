/**
 * Route groups registered at start-up by method and path alone, from the route manifest (route-manifest.ts,
 * generated from the groups themselves): a group's module is imported, and its routes built by its own
 * register function on a scratch app, when one of them is first reached. Each stand-in takes the place of
 * exactly one of the group's registrations (same method, same path, same place in the app, a handler
 * still a handler and a middleware still a middleware, which operator/request-facts.ts tells apart), so
 * the app matches every request as before; the group's OpenAPI entries are written where it was
 * registered when the document is first built (openapi/deferred.ts).
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import type { Context, Next } from "hono";
import type { RouterRoute } from "hono/types";
import type { AppEnv } from "./env";
import { addDefinitions, completeDocumentation, documentLater } from "./openapi/deferred";

export type RegisterRoutes = (app: OpenAPIHono<AppEnv>) => void;

export interface RouteGroupCard {
  load(): Promise<RegisterRoutes>;
  /**
   * The group's registrations in order: method (`ALL` for a middleware of `use`), path, and whether it is a middleware
   * (takes `next`).
   */
  routes: readonly (readonly [method: string, path: string, middleware: boolean])[];
}

/** The registrations of `register` on a scratch app, as the manifest lists them. */
export function routesOf(routes: readonly RouterRoute[]): RouteGroupCard["routes"] {
  return routes.map((r) => [r.method, r.path, r.handler.length >= 2] as const);
}

export function registerLazily(app: OpenAPIHono<AppEnv>, card: RouteGroupCard): void {
  let built: Promise<OpenAPIHono<AppEnv>> | undefined;
  const build = () =>
    (built ??= card.load().then((register) => {
      const scratch = new OpenAPIHono<AppEnv>({ defaultHook: app.defaultHook });
      register(scratch);
      if (JSON.stringify(routesOf(scratch.routes)) !== JSON.stringify(card.routes))
        throw new Error("a route group is not what the route manifest says: npm run manifests");
      return scratch;
    }));
  card.routes.forEach(([method, path, middleware], i) => {
    const real = async (c: Context<AppEnv>, next: Next) => (await build()).routes[i]!.handler(c, next);
    app.on(
      method,
      path,
      middleware
        ? (c: Context<AppEnv>, next: Next) => real(c, next)
        : (c: Context<AppEnv>, ...rest: [Next]) => real(c, rest[0]),
    );
  });
  documentLater(app, async (registry) => {
    const scratch = await build();
    // What the group itself declared for later (every kind's part of it) is written first.
    await completeDocumentation(scratch);
    addDefinitions(registry, scratch.openAPIRegistry.definitions);
  });
}
