/**
 * Which tools a connection lists. MCP clients cap what they take (VS Code refuses more
 * than 128 tools, Cursor hands its model the first 40 to 80), so the default list is
 * small and generic and still reaches every kind (describe_kind, create_resource,
 * call_operation). `?toolsets=` adds the typed tools of chosen families or kinds, as
 * GitHub's MCP server does; `all` adds every kind's. Tools not listed can still be
 * called by name: the list is what a model is shown, not what it may use.
 */
import type { AnyKind } from "../kind/kind";
import { FAMILIES, KIND_NAMES, kindsNamed } from "../resources/kinds";
import { GENERIC_TOOLS } from "./generic";
import { CORE_ROUTE_TOOLS, kindToolNames } from "./tools";

/**
 * The kinds a `toolsets` query names: families, kinds, or `all`. An unknown name is a 400 that lists the known ones.
 */
export function selectedKinds(query: string | undefined): AnyKind[] {
  return query === undefined ? [] : kindsNamed(query, "toolsets");
}

/** Tool names in listing order: the generic tools, the core route tools, then the typed tools of `kinds`. */
export function listedToolNames(kinds: AnyKind[]): string[] {
  return [...GENERIC_TOOLS.map((t) => t.name), ...CORE_ROUTE_TOOLS, ...kinds.flatMap(kindToolNames)];
}

export const TOOLSET_NAMES = ["all", ...FAMILIES, ...KIND_NAMES];
