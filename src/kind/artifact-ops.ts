/**
 * The operations on a kind's collection of made things (artifacts.ts): list them newest first, get one, download its
 * file (when it keeps one in R2), delete one. pdf, convert and ocr have the same four (three for ocr, which keeps no
 * file); each says where the collection is, its views, the id prefix, the op that makes one and what get and delete
 * say, and the names, paths, inputs, errors and examples follow from the collection's nouns.
 */
import { z } from "@hono/zod-openapi";
import { noInput, pageLimit, seqCursor } from "../openapi/schemas";
import type { Json } from "../json";
import type { ArtifactNames, Artifacts, StoredArtifacts } from "./artifacts";
import type { Page } from "./pages";
import { rangeHeader } from "./downloads";
import { kindOf } from "./kind";

/**
 * The path parameter naming one (`render_id: pdf_…`). Typed by hand: zod cannot work out an object's output from a
 * key that is a type parameter.
 */
export function artifactIdParam<Name extends string>(
  name: Name,
  prefix: string,
): z.ZodObject & z.ZodType<Record<Name, string>> {
  const example = `${prefix}0123456789abcdefABCDEF`;
  return z.object({
    [name]: z
      .string()
      .regex(new RegExp(`^${prefix}[0-9A-Za-z]{22}$`))
      .openapi({ example }),
  }) as unknown as z.ZodObject & z.ZodType<Record<Name, string>>;
}

/** The list's query: a page of newest first. */
export const artifactsInput = z.object({
  limit: pageLimit(20),
  cursor: seqCursor.describe("`next_cursor` of the previous page."),
});

/** What a download op returns for the route to serve. */
export const storedArtifact = z.object({ object_key: z.string() });

export interface ArtifactOpsSpec<View extends Json> {
  /** Where the collection is, below the resource ("/renders"). */
  path: string;
  /** The prefix of its public ids ("pdf_"). */
  idPrefix: string;
  view: z.ZodType<View>;
  page: z.ZodType<Page<View>>;
  /** The operation that makes one: the examples of the others call it first. */
  madeBy: string;
  /** What get_… and delete_… say they answer and do. */
  summaries: { get: string; delete: string };
  priceMicro: number;
}

/** list_{plural}, get_{noun} and delete_{noun}, in that order. */
export function artifactOps<Row, View extends Json, Noun extends string, Plural extends string, Id extends string>(
  collection: Artifacts<Row, View, ArtifactNames<Noun, Plural, Id>>,
  spec: ArtifactOpsSpec<View>,
) {
  const kind = kindOf<unknown>();
  const { noun, plural, idColumn: id } = collection.spec;
  const one = `${spec.path}/{${id}}`;
  const params = artifactIdParam(id, spec.idPrefix);
  const example = { params: { [id]: `${spec.idPrefix}0123456789abcdefABCDEF` }, after: [spec.madeBy] };
  const { priceMicro } = spec;
  return [
    kind.op({
      name: `list_${plural}` as const,
      method: "get",
      path: spec.path,
      summary: `${plural[0]!.toUpperCase()}${plural.slice(1)}, newest first`,
      priceMicro,
      input: artifactsInput,
      output: spec.page,
      example: { input: { limit: 20 } },
      run: (store, _config, input) => collection.page(store, input.limit, input.cursor),
    }),
    kind.op({
      name: `get_${noun}` as const,
      method: "get",
      path: one,
      summary: spec.summaries.get,
      priceMicro,
      params,
      input: noInput,
      output: spec.view,
      errors: [404],
      example,
      run: (store, _config, input: Record<Id, string>) => collection.get(store, input[id]),
    }),
    kind.op({
      name: `delete_${noun}` as const,
      method: "delete",
      path: one,
      summary: spec.summaries.delete,
      priceMicro,
      params,
      input: noInput,
      output: spec.view,
      errors: [404],
      example,
      run: (store, _config, input: Record<Id, string>) => collection.remove(store, input[id]),
    }),
  ] as const;
}

/** As artifactOps, with `download` (the file, Range honoured) between get and delete; `download` is its summary. */
export function storedArtifactOps<
  Row,
  View extends Json,
  Noun extends string,
  Plural extends string,
  Id extends string,
>(
  collection: StoredArtifacts<Row, View, ArtifactNames<Noun, Plural, Id>>,
  spec: ArtifactOpsSpec<View> & { download: string },
) {
  const [list, get, remove] = artifactOps(collection, spec);
  const id = collection.spec.idColumn;
  const download = kindOf<unknown>().op({
    name: "download",
    method: "get",
    path: `${get.path}/content`,
    summary: spec.download,
    priceMicro: spec.priceMicro,
    params: get.params,
    input: noInput,
    headers: rangeHeader,
    output: storedArtifact,
    servesObject: true,
    errors: [404, 416],
    example: get.example,
    run: (store, _config, input) => collection.stored(store, input[id], input.range),
  });
  return [list, get, download, remove] as const;
}
