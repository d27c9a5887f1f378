/**
 * Matching a public request to one of its face's routes (docs/api.md#public-addresses): the path split once
 * per route into literals, `{name}` params and a trailing `{name*}`, so 404 and 405 (with
 * `Allow`) are decided at the edge before any Durable Object wakes.
 */
import { PUBLIC_METHODS, type PublicMethod, type PublicRoute } from "../kind/public-face";

/**
 * The route `method path` matches: its params, or why not (no such path: 404; not this method: 405 with what is
 * allowed).
 */
export function matchRoute(
  routes: PublicRoute[],
  method: string,
  path: string,
):
  | { route: PublicRoute; params: Record<string, string> }
  | { error: "not_found" }
  | { error: "method_not_allowed"; allow: PublicMethod[] } {
  const segments = splitPath(path);
  const allow = new Set<PublicMethod>();
  for (const route of routes) {
    const params = matchPath(patternOf(route), segments);
    if (!params) continue;
    const methods = methodsOf(route);
    if (
      (methods as string[]).includes(method) ||
      (route.anyMethod && !(PUBLIC_METHODS as readonly string[]).includes(method))
    )
      return { route, params };
    methods.forEach((m) => allow.add(m));
  }
  return allow.size
    ? { error: "method_not_allowed", allow: PUBLIC_METHODS.filter((m) => allow.has(m)) }
    : { error: "not_found" };
}

/** A route's methods; HEAD comes with GET, as HTTP has it. */
export function methodsOf(route: PublicRoute): PublicMethod[] {
  return route.methods.includes("GET") && !route.methods.includes("HEAD") ? [...route.methods, "HEAD"] : route.methods;
}

function splitPath(path: string): string[] {
  const trimmed = path.replace(/\/$/, "");
  return trimmed === "" ? [] : trimmed.slice(1).split("/");
}

/** A route's path, split once: each fixed segment as a literal or a `{name}`, and the `{name*}` that takes the rest. */
interface Pattern {
  fixed: ({ literal: string } | { param: string })[];
  rest: string | undefined;
}

const patterns = new WeakMap<PublicRoute, Pattern>();

function patternOf(route: PublicRoute): Pattern {
  let pattern = patterns.get(route);
  if (!pattern) {
    const segments = splitPath(route.path);
    const rest = /^\{(\w+)\*\}$/.exec(segments[segments.length - 1] ?? "")?.[1];
    const fixed = (rest ? segments.slice(0, -1) : segments).map((p) => {
      const param = /^\{(\w+)\}$/.exec(p)?.[1];
      return param ? { param } : { literal: p };
    });
    pattern = { fixed, rest };
    patterns.set(route, pattern);
  }
  return pattern;
}

function matchPath({ fixed, rest }: Pattern, segments: string[]): Record<string, string> | null {
  if (rest ? segments.length < fixed.length : segments.length !== fixed.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < fixed.length; i++) {
    const p = fixed[i]!;
    const s = segments[i]!;
    if ("param" in p) {
      if (s === "") return null;
      const value = decoded(s);
      if (value === null) return null;
      params[p.param] = value;
    } else if (p.literal !== s) return null;
  }
  if (rest) {
    const tail = segments.slice(fixed.length).map(decoded);
    if (tail.includes(null)) return null;
    params[rest] = tail.join("/");
  }
  return params;
}

function decoded(segment: string): string | null {
  if (!segment.includes("%")) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}
