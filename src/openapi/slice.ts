/**
 * A slice of the OpenAPI document for some kinds (`/openapi.json?kinds=counters,queues`
 * or a family): a valid document on its own, small enough to hand an agent or a
 * generator whole. It keeps those kinds' routes, the routes every resource shares
 * (status, extend, export, cancel, signed downloads), their events, and only the
 * components all of that refers to.
 */
import type { OpenAPIObject, PathItemObject, SecurityRequirementObject } from "openapi3-ts/oas31";
import type { AnyKind } from "../kind/kind";
import { ownPathsOf } from "../resources/kind-routes";
import { pruneComponents } from "./refs";
import { operations } from "./walk";

/** Routes every slice keeps: a resource cannot be managed, or its content fetched, without them. */
const SHARED_PATHS = [
  "/v1/resources/{id}",
  "/v1/resources/{id}/extend",
  "/v1/resources/{id}/export",
  "/v1/{kind}/{id}/deliveries",
  "/v1/{kind}/{id}/deliveries/{delivery_id}/retry",
  "/v1/downloads/{key}",
];
/** The whole document's description, less what belongs to the whole (its slices, its webhooks). */
const SLICE_DESCRIPTION =
  "A slice of this service's OpenAPI document (`/openapi.json`; `/llms.txt` lists every kind). Operations " +
  "on a resource are authorized by its management token and paid with `X-CREDIT-TOKEN` or x402. Every " +
  "response carries `RateLimit-*` headers; every error is `application/problem+json`.";
const LIFECYCLE_EVENTS = ["resource.expiring", "resource.expired", "resource.cancelled"];

function securityNames(requirements: SecurityRequirementObject[] | undefined, into: Set<string>): void {
  for (const r of requirements ?? []) for (const name of Object.keys(r)) into.add(name);
}

export function slice(full: OpenAPIObject, kinds: AnyKind[]): OpenAPIObject {
  const doc = structuredClone(full);
  const owns = (path: string) =>
    SHARED_PATHS.includes(path) ||
    kinds.some((k) => path === `/v1/${k.kind}` || path.startsWith(`/v1/${k.kind}/`) || ownPathsOf(k).includes(path));
  doc.paths = Object.fromEntries(Object.entries<PathItemObject>(doc.paths ?? {}).filter(([path]) => owns(path)));
  const events = new Set([...LIFECYCLE_EVENTS, ...kinds.flatMap((k) => Object.keys(k.sends ?? {}))]);
  doc.webhooks = Object.fromEntries(
    Object.entries<PathItemObject>(doc.webhooks ?? {}).filter(([type]) => events.has(type)),
  );

  pruneComponents(doc);
  const schemes = new Set<string>();
  securityNames(doc.security, schemes);
  const ops = [...operations(doc)];
  for (const op of ops) securityNames(op.security, schemes);
  const components = (doc.components ??= {});
  components.securitySchemes = Object.fromEntries(
    Object.entries(components.securitySchemes ?? {}).filter(([name]) => schemes.has(name)),
  );
  const tags = new Set(ops.flatMap((op) => op.tags ?? []));
  doc.tags = (doc.tags ?? []).filter((t) => tags.has(t.name));
  doc.info = {
    ...doc.info,
    title: `${doc.info.title}: ${kinds.map((k) => k.kind).join(", ")}`,
    description: SLICE_DESCRIPTION,
  };
  return doc;
}
