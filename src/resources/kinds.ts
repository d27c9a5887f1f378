/**
 * The kinds as the worker and the resource objects reach them: by name from the kind manifest (plain data,
 * generated from the registry), each kind's module loaded on first use. Building every kind's zod schemas,
 * routes and OpenAPI fragments was two thirds of an isolate's start-up (bench/README.md, start-up); now a
 * request pays for the kind it names. The registry (registry.ts) stays the list to edit, and what tests and
 * the manifest's generator read; nothing the worker loads at start-up imports it.
 */
import type { AnyKind, Family, KindCard } from "../kind/kind";
import { AppError } from "../http/errors";
import { KIND_CARDS } from "./kind-manifest";

export { KIND_CARDS };
export const FAMILIES: Family[] = ["time", "address", "memory", "place", "watching", "utilities"];
export const KIND_NAMES: readonly string[] = KIND_CARDS.map((card) => card.kind);

const cards = new Map(KIND_CARDS.map((card) => [card.kind, card]));
const loaded = new Map<string, AnyKind>();
const loading = new Map<string, Promise<AnyKind>>();

export const isKindName = (name: string): boolean => cards.has(name);
export const kindCard = (name: string): KindCard | undefined => cards.get(name);

/** The kind's module, imported once per isolate. An unknown name is a bug (callers check names first). */
export function loadKind(name: string): Promise<AnyKind> {
  const done = loaded.get(name);
  if (done) return Promise.resolve(done);
  let pending = loading.get(name);
  if (!pending) {
    const card = cards.get(name);
    if (!card) return Promise.reject(new Error(`unknown kind ${name}`));
    pending = card.load().then((kind) => (loaded.set(name, kind), kind));
    loading.set(name, pending);
  }
  return pending;
}

/**
 * A kind this isolate has loaded (loadKind), for the synchronous code that runs after: a resource object
 * loads its kind before it serves anything. Unknown or not yet loaded is a bug, not a client error.
 */
export function requireKind(name: string): AnyKind {
  const kind = loaded.get(name);
  if (!kind) throw new Error(cards.has(name) ? `kind ${name} used before it was loaded` : `unknown kind ${name}`);
  return kind;
}

let every: Promise<readonly AnyKind[]> | undefined;
let everyLoaded: readonly AnyKind[] | undefined;

/** Every kind, in the registry's order (one after another, as the registry's imports would have run them). */
export function loadAllKinds(): Promise<readonly AnyKind[]> {
  every ??= (async () => {
    const kinds: AnyKind[] = [];
    for (const card of KIND_CARDS) kinds.push(await loadKind(card.kind));
    return (everyLoaded = kinds);
  })();
  return every;
}

/** Every kind, once loadAllKinds has: for what answers about all of them (the document, the prices, the MCP tools). */
export function allKinds(): readonly AnyKind[] {
  if (!everyLoaded) throw new Error("every kind used before loadAllKinds");
  return everyLoaded;
}

/**
 * The kinds a comma-separated list names (`memory,wakeups`): families, kinds, or `all`, in registry
 * order. An unknown name is a 400 naming `param` and listing the known ones.
 */
export function kindsNamed(list: string, param: string, kinds: readonly AnyKind[] = allKinds()): AnyKind[] {
  const chosen = new Set<AnyKind>();
  for (const raw of list.split(",")) {
    const name = raw.trim().toLowerCase();
    if (name === "") continue;
    const family = FAMILIES.includes(name as Family);
    const named = name === "all" ? kinds : kinds.filter((k) => (family ? k.family === name : k.kind === name));
    if (named.length === 0 && !family) {
      throw new AppError(
        "invalid_request",
        `Unknown ${param} entry "${name}": name families (${FAMILIES.join(", ")}), kinds (` +
          `${kinds.map((k) => k.kind).join(", ")}) or all.`,
        {
          errors: [{ path: `query.${param}`, message: `unknown family or kind ${name}` }],
        },
      );
    }
    for (const kind of named) chosen.add(kind);
  }
  return kinds.filter((k) => chosen.has(k));
}
