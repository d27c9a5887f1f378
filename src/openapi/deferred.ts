/**
 * Parts of the OpenAPI registry that describe every kind (their routes, the requests they send, what their
 * public addresses serve) are written when the document, or the MCP catalogue that reads the same registry,
 * is first needed, not at start-up: writing them means loading every kind. Each part goes back where it was
 * declared among the others, so the document is the one a registry written at start-up would give.
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import { loadAllKinds } from "../resources/kinds";

type Registry = OpenAPIHono<AppEnv>["openAPIRegistry"];
type Definition = Registry["definitions"][number];
/** Registers a part; every kind is loaded by then (resources/kinds.ts allKinds). */
type Writer = (registry: Registry) => void | Promise<void>;

const pending = new WeakMap<OpenAPIHono<AppEnv>, { at: number; write: Writer }[]>();
const completed = new WeakMap<OpenAPIHono<AppEnv>, Promise<void>>();

/** Declares a part of `app`'s registry here, in the order of the registrations around it, to be written later. */
export function documentLater(app: OpenAPIHono<AppEnv>, write: Writer): void {
  pending.set(app, [...(pending.get(app) ?? []), { at: app.openAPIRegistry.definitions.length, write }]);
}

/** Registers definitions made on another registry (a scratch app's), as they were made. */
export function addDefinitions(registry: Registry, definitions: readonly Definition[]): void {
  for (const def of definitions) {
    if (def.type === "route") registry.registerPath(def.route);
    else if (def.type === "webhook") registry.registerWebhook(def.webhook);
    else if (def.type === "component") registry.registerComponent(def.componentType, def.name, def.component);
    else throw new Error(`openapi/deferred.ts cannot move a ${def.type} definition: register it as a component`);
  }
}

/**
 * Loads every kind and gives `app` a registry with the parts declared on it written in their places, once
 * per isolate; what reads the registry (the document, the MCP catalogue) awaits this first. The registry
 * is a new one, swapped in whole once written: the library's own keeps its list to itself.
 */
export function completeDocumentation(app: OpenAPIHono<AppEnv>): Promise<void> {
  let done = completed.get(app);
  if (!done) {
    done = (async () => {
      await loadAllKinds();
      const declared = app.openAPIRegistry.definitions;
      const complete = new OpenAPIHono<AppEnv>().openAPIRegistry;
      let from = 0;
      for (const { at, write } of pending.get(app) ?? []) {
        addDefinitions(complete, declared.slice(from, at));
        from = at;
        await write(complete);
      }
      addDefinitions(complete, declared.slice(from));
      app.openAPIRegistry = complete;
      pending.delete(app);
    })();
    // A failure (a kind that does not load) is not kept: the next request tries again.
    done.catch(() => completed.delete(app));
    completed.set(app, done);
  }
  return done;
}
