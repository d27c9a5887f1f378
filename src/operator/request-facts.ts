/**
 * What a request was, as the operator counts it: the route pattern that answered it (never the
 * raw path, which carries ids and may carry tokens), the kind it concerns and the priced operation.
 * Worked out once per route and kept, so the hot path pays a map look-up, not a parse.
 */
import type { Context } from "hono";
import { matchedRoutes } from "hono/route";
import type { AppEnv } from "../env";
import { isKindName, KIND_CARDS } from "../resources/kinds";

export interface RequestFacts {
  /**
   * The answering route's pattern as the OpenAPI document writes it (`/v1/vaults/{id}/keys/{key}`); null when no route
   * matched.
   */
  route: string | null;
  kind: string | null;
  /** `{kind}.create` or `{kind}.{op}` (as in /v1/prices), or what runPaid charged (an extend, a purchase). */
  operation: string | null;
  /** A public address (`/p/…`): free traffic, counted apart from the API's calls. */
  isPublic: boolean;
}

type RouteFacts = Omit<RequestFacts, "isPublic"> & {
  /** The route names its kind by a parameter (`/v1/{kind}/{id}/deliveries`): the path's second segment says which. */
  kindInPath?: boolean;
};

let operations: Map<string, string> | undefined;

/** `METHOD pattern` → operation name, for every kind's create and operations (the patterns Hono routes by). */
function operationIndex(): Map<string, string> {
  if (operations) return operations;
  operations = new Map();
  for (const kind of KIND_CARDS) {
    operations.set(`POST /v1/${kind.kind}`, `${kind.kind}.create`);
    for (const op of kind.ops)
      operations.set(
        `${op.method.toUpperCase()} /v1/${kind.kind}/:id${op.path.replace(/\{(\w+)\}/g, ":$1")}`,
        `${kind.kind}.${op.name}`,
      );
  }
  return operations;
}

const known = new Map<string, RouteFacts>();

function routeFacts(method: string, pattern: string): RouteFacts {
  const key = `${method} ${pattern}`;
  let facts = known.get(key);
  if (!facts) {
    const segment = pattern.startsWith("/v1/") ? pattern.split("/")[2]! : "";
    facts = {
      route: pattern.replace(/:(\w+)/g, "{$1}"),
      kind: isKindName(segment) ? segment : null,
      operation: operationIndex().get(key) ?? null,
      kindInPath: segment === ":kind",
    };
    known.set(key, facts);
  }
  return facts;
}

/**
 * The route that answers: the first matched handler (middleware takes `next`, a handler does not;
 * this also names the route a middleware refused the request for, a 401 or a 429).
 */
function answeringRoute(c: Context<AppEnv>): { method: string; path: string } | null {
  for (const route of matchedRoutes(c)) if (route.handler.length < 2) return route;
  return null;
}

function kindSegment(path: string): string | null {
  const segment = path.split("/", 3)[2] ?? "";
  return isKindName(segment) ? segment : null;
}

/** The kind a public id names (`{kind}_{…}`); ids of the first layout name none. */
function publicKind(path: string): string | null {
  const end = path.indexOf("/", 3);
  const id = path.slice(3, end === -1 ? undefined : end);
  const kind = id.slice(0, Math.max(0, id.lastIndexOf("_")));
  return kind && isKindName(kind) ? kind : null;
}

export function requestFacts(c: Context<AppEnv>): RequestFacts {
  const route = answeringRoute(c);
  const facts: RouteFacts = route ? routeFacts(route.method, route.path) : { route: null, kind: null, operation: null };
  const path = c.req.path;
  const isPublic = path.startsWith("/p/");
  const charged = c.get("charged");
  let kind = isPublic ? publicKind(path) : facts.kindInPath ? kindSegment(path) : facts.kind;
  // /v1/resources/{id}/extend names no kind in its path: the operation it was charged for does.
  if (charged && !kind) {
    const named = charged.operation.split(".")[0]!;
    kind = isKindName(named) ? named : null;
  }
  return { route: facts.route, kind, operation: charged?.operation ?? facts.operation, isPublic };
}
