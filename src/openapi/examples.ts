/**
 * Puts the registry's examples into the document: each kind's create body and each
 * operation's path parameters, query, headers and body, as the examples test sends
 * them. A client generated from the document, or an agent reading it, has a request
 * that works for every operation.
 */
import type { OpenAPIObject, OperationObject, ParameterLocation } from "openapi3-ts/oas31";
import { allKinds } from "../resources/kinds";
import { isRef } from "./walk";

/** Sets `example` on the parameters an example names (path, query, header). */
function exampleParameters(
  op: OperationObject,
  values: Partial<Record<ParameterLocation, Record<string, unknown>>>,
): void {
  for (const p of op.parameters ?? []) {
    if (isRef(p)) continue;
    const value = values[p.in]?.[p.in === "header" ? p.name.toLowerCase() : p.name];
    if (value !== undefined) p.example = value;
  }
}

/** The JSON and raw bodies an operation takes (none when its body is a `$ref`). */
const contentOf = (op: OperationObject | undefined) =>
  op?.requestBody && !isRef(op.requestBody) ? op.requestBody.content : undefined;

export function withExamples(doc: OpenAPIObject): OpenAPIObject {
  for (const kind of allKinds()) {
    const create = contentOf(doc.paths?.[`/v1/${kind.kind}`]?.post)?.["application/json"];
    if (create) create.example = kind.example;
    for (const op of kind.ops) {
      const target = doc.paths?.[`/v1/${kind.kind}/{id}${op.path}`]?.[op.method];
      if (!target) continue;
      const example = op.example ?? {};
      const query = op.method === "get" || op.method === "delete" ? example.input : undefined;
      exampleParameters(target, { path: example.params, query, header: example.headers });
      const content = contentOf(target);
      if (content?.["application/json"]) content["application/json"].example = example.input ?? {};
      if (content?.["application/octet-stream"]) content["application/octet-stream"].example = example.bytes ?? "";
    }
  }
  return doc;
}
