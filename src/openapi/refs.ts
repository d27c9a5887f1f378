/** `$ref`s within a document: what its paths and events still reach, once parts are cut away. */
import type { OpenAPIObject as Document } from "openapi3-ts/oas31";

/** The document's components, section by section, as plain entries. */
const sectionsOf = (doc: Document) => (doc.components ?? {}) as Record<string, Record<string, unknown> | undefined>;

function refsIn(value: unknown, into: Set<string>): void {
  if (Array.isArray(value)) for (const v of value) refsIn(v, into);
  else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (k === "$ref" && typeof v === "string") into.add(v);
      else refsIn(v, into);
    }
  }
}

/** Every `#/components/…` reference reachable from `roots`, through the components themselves. */
function reachable(doc: Document, roots: unknown[]): Set<string> {
  const found = new Set<string>();
  refsIn(roots, found);
  const queue = [...found];
  while (queue.length) {
    const [, , section, name] = queue.pop()!.split("/");
    const more = new Set<string>();
    refsIn(sectionsOf(doc)[section!]?.[name!], more);
    for (const ref of more) if (!found.has(ref)) (found.add(ref), queue.push(ref));
  }
  return found;
}

/** Drops every component (security schemes aside) that the paths and webhooks no longer reach. */
export function pruneComponents(doc: Document): void {
  const refs = reachable(doc, [doc.paths, doc.webhooks]);
  const components = sectionsOf(doc);
  for (const [section, entries] of Object.entries(components)) {
    if (section === "securitySchemes" || !entries) continue;
    components[section] = Object.fromEntries(
      Object.entries(entries).filter(([name]) => refs.has(`#/components/${section}/${name}`)),
    );
  }
}
