/**
 * The OpenAPI document as data, for the passes that rewrite it after the generator (compact.ts,
 * examples.ts, slice.ts, refs.ts): its types are the generator's own (@hono/zod-openapi builds on
 * openapi3-ts), and a part may be a `$ref` wherever the specification allows one.
 */
import type { OpenAPIObject, OperationObject, PathItemObject, ReferenceObject } from "openapi3-ts/oas31";

/** A `{ $ref }` in place of the object itself. */
export const isRef = (value: object): value is ReferenceObject => "$ref" in value;

const METHODS = ["get", "put", "post", "delete", "patch", "head", "options"] as const;

/** Every operation of the document, under its paths and its webhooks. */
export function* operations(doc: OpenAPIObject): Generator<OperationObject> {
  for (const item of [
    ...Object.values<PathItemObject>(doc.paths ?? {}),
    ...Object.values<PathItemObject>(doc.webhooks ?? {}),
  ]) {
    for (const m of METHODS) if (item[m]) yield item[m];
  }
}
