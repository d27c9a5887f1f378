/**
 * The app's own routes as a table, for the requests no route took: which methods a path does take
 * (405 with `Allow`), or which known paths are near a mistyped one (a 404 that names them). Read
 * from the routes actually registered (Hono's `app.routes`: the registry's and every other group's),
 * so it cannot drift from them as a hand-kept list would.
 */

/**
 * A route as Hono lists it: `ALL` is middleware (or a catch-all that answers for itself), never a method a path takes.
 */
export interface RegisteredRoute {
  method: string;
  path: string;
}

type Segment = { literal: string } | { param: RegExp | null } | { rest: true };

interface Pattern {
  segments: Segment[];
  methods: Set<string>;
}

export interface NearPath {
  /** The known path with the request's own values in place of its parameters. */
  path: string;
  methods: string[];
}

export interface RouteTable {
  /** The methods `path` takes (HEAD wherever GET is, and OPTIONS), or null when no route has that path. */
  allowed(path: string): string[] | null;
  /** Up to three known paths within a few typos of `path`, as near as any. */
  nearest(path: string): NearPath[];
}

const METHOD_ORDER = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
const byMethodOrder = (a: string, b: string) => METHOD_ORDER.indexOf(a) - METHOD_ORDER.indexOf(b);

/** Hono's path syntax: `:name`, `:name{regex}`, and a trailing `*`. */
function parse(path: string): Segment[] {
  return path
    .split("/")
    .slice(1)
    .map((part): Segment => {
      if (part === "*") return { rest: true };
      const param = /^:\w+(?:\{(.+)\})?\??$/.exec(part);
      if (param) return { param: param[1] ? new RegExp(`^(?:${param[1]})$`) : null };
      return { literal: part };
    });
}

function matches(segments: Segment[], parts: string[]): boolean {
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    if ("rest" in segment) return true;
    const part = parts[i];
    if (part === undefined) return false;
    if (
      "literal" in segment
        ? segment.literal !== part
        : part === "" || (segment.param !== null && !segment.param.test(part))
    )
      return false;
  }
  return segments.length === parts.length;
}

/** Typos allowed in a segment of this length: one in a short name, one in four letters of a long one. */
const allowance = (length: number) => Math.max(1, Math.floor(length / 4));

/**
 * Optimal string alignment distance (Levenshtein with adjacent transpositions: `countres` is one
 * typo from `counters`), or Infinity once it must exceed `limit`. Lengths further apart than the
 * limit are refused before any work, so a long junk path costs nothing.
 */
export function typoDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return Infinity;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2]! + 1);
      row.push(d);
      best = Math.min(best, d);
    }
    if (best > limit) return Infinity;
    before = previous;
    previous = row;
  }
  const distance = previous[b.length]!;
  return distance > limit ? Infinity : distance;
}

/**
 * How far `parts` is from the pattern (the sum of its segments' typos), and the path it names, or null when too far.
 */
function near(pattern: Segment[], parts: string[]): { distance: number; path: string } | null {
  const segments = pattern.filter((s) => !("literal" in s && s.literal === ""));
  if (segments.length === 0 || segments.length !== parts.length || segments.some((s) => "rest" in s)) return null;
  let distance = 0;
  const path: string[] = [];
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    const part = parts[i]!;
    if ("literal" in segment) {
      const d = typoDistance(part.toLowerCase(), segment.literal, allowance(segment.literal.length));
      if (d === Infinity) return null;
      distance += d;
      path.push(segment.literal);
    } else if ("param" in segment) {
      if (part === "" || (segment.param !== null && !segment.param.test(part))) return null;
      path.push(part);
    }
  }
  return { distance, path: `/${path.join("/")}` };
}

export function routeTable(routes: readonly RegisteredRoute[]): RouteTable {
  const patterns = new Map<string, Pattern>();
  for (const route of routes) {
    if (route.method === "ALL") continue;
    const pattern = patterns.get(route.path) ?? { segments: parse(route.path), methods: new Set<string>() };
    pattern.methods.add(route.method.toUpperCase());
    patterns.set(route.path, pattern);
  }
  const withImplied = (methods: Set<string>) => {
    const all = new Set([...methods, "OPTIONS"]);
    if (all.has("GET")) all.add("HEAD");
    return [...all].sort(byMethodOrder);
  };
  return {
    allowed(path) {
      const parts = path.split("/").slice(1);
      const methods = new Set<string>();
      for (const pattern of patterns.values())
        if (matches(pattern.segments, parts)) for (const m of pattern.methods) methods.add(m);
      return methods.size ? withImplied(methods) : null;
    },
    nearest(path) {
      // A trailing slash or a doubled one is a typo too: compare the names alone.
      const parts = path.split("/").filter(Boolean);
      const found = new Map<string, { distance: number; methods: Set<string> }>();
      for (const pattern of patterns.values()) {
        const hit = near(pattern.segments, parts);
        if (!hit || hit.path === path) continue;
        const seen = found.get(hit.path) ?? { distance: hit.distance, methods: new Set<string>() };
        seen.distance = Math.min(seen.distance, hit.distance);
        for (const m of pattern.methods) seen.methods.add(m);
        found.set(hit.path, seen);
      }
      // The nearest only: `incremnt` is `increment`, though `decrement` is not far either.
      const best = Math.min(...[...found.values()].map((f) => f.distance));
      return [...found.entries()]
        .filter(([, f]) => f.distance === best)
        .slice(0, 3)
        .map(([known, { methods }]) => ({ path: known, methods: withImplied(methods) }));
    },
  };
}
