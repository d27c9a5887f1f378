/**
 * Puts the registry's examples into the document: each kind's create body and each
 * operation's path parameters, query, headers and body, as the examples test sends
 * them. A client generated from the document, or an agent reading it, has a request
 * that works for every operation.
 */
import { allKinds } from "../resources/kinds";

type Json = Record<string, any>;

/** Sets `example` on the parameters an example names (path, query, header). */
function exampleParameters(op: Json, values: Record<string, Record<string, unknown> | undefined>): void {
  for (const p of op.parameters ?? []) {
    const value = p.$ref ? undefined : values[p.in]?.[p.in === "header" ? String(p.name).toLowerCase() : p.name];
    if (value !== undefined) p.example = value;
  }
}

export function withExamples(doc: Json): Json {
  for (const kind of allKinds()) {
    const create = doc.paths?.[`/v1/${kind.kind}`]?.post;
    if (create) create.requestBody.content["application/json"].example = kind.example;
    for (const op of kind.ops) {
      const target = doc.paths?.[`/v1/${kind.kind}/{id}${op.path}`]?.[op.method];
      if (!target) continue;
      const example = op.example ?? {};
      const query = op.method === "get" || op.method === "delete" ? example.input : undefined;
      exampleParameters(target, { path: example.params, query, header: example.headers });
      const content = target.requestBody?.content;
      if (content?.["application/json"]) content["application/json"].example = example.input ?? {};
      if (content?.["application/octet-stream"]) content["application/octet-stream"].example = example.bytes ?? "";
    }
  }
  return doc;
}
