/**
 * The kind manifest (src/resources/kind-manifest.ts) is the registry's: every kind, in order, with its
 * name, family, summary, its own routes and its operations' methods, paths and body limits, and a loader
 * that imports the very kind the registry lists. `npm run manifests` rewrites it after a change.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { OpenAPIHono } from "@hono/zod-openapi";
import { expect, it } from "vitest";
import type { AnyKind, KindCard } from "../../src/kind/kind";
import { KINDS } from "../../src/resources/registry";
import { KIND_CARDS } from "../../src/resources/kind-manifest";

const FILE = "src/resources/kind-manifest.ts";
const REGISTRY = "src/resources/registry.ts";

/** The module and export name of each kind, from the registry's imports and its list, in the list's order. */
function importsOf(source: string): { name: string; from: string }[] {
  const from = new Map(
    [...source.matchAll(/^import \{ (\w+) \} from "(\.\.\/kinds\/[^"]+)";$/gm)].map((m) => [m[1]!, m[2]!]),
  );
  const list = /export const KINDS: readonly AnyKind\[\] = \[([^\]]*)\];/.exec(source)?.[1] ?? "";
  return list
    .split(",")
    .map((n) => n.trim())
    .filter(Boolean)
    .map((name) => ({ name, from: from.get(name) ?? "" }));
}

/** The routes a kind's `routes` adds, as its OpenAPI registrations declare them. */
function ownRoutes(kind: AnyKind): KindCard["ownRoutes"] {
  const app = new OpenAPIHono();
  kind.routes?.(app as never);
  const documented = app.openAPIRegistry.definitions.flatMap((d) =>
    d.type === "route"
      ? [{ method: d.route.method as KindCard["ownRoutes"][number]["method"], path: d.route.path }]
      : [],
  );
  // The worker registers these before loading the kind: a route it adds without documenting it would be missed.
  const routed = [...new Set(app.routes.map((r) => `${r.method} ${r.path}`))];
  expect(routed, `${kind.kind}.routes adds only documented routes (app.openapi)`).toEqual(
    documented.map((r) => `${r.method.toUpperCase()} ${r.path.replaceAll(/\/{(.+?)}/g, "/:$1")}`),
  );
  return documented;
}

const str = JSON.stringify;
const WIDTH = 120;
const fits = (line: string): boolean => Buffer.byteLength(line) <= WIDTH;

/**
 * `text` as a string literal after `head` (an indented `key:`), on one line if it fits, else as a `+`-joined
 * chain of pieces split after spaces, one a line below the key, each line within the formatter's width.
 */
function literal(head: string, text: string, tail: string): string[] {
  if (fits(`${head} ${str(text)}${tail}`)) return [`${head} ${str(text)}${tail}`];
  const indent = `${head.match(/^ */)![0]}  `;
  const pieces: string[] = [];
  let piece = "";
  for (const word of text.split(/(?<= )/)) {
    if (piece && !fits(`${indent}${str(piece + word)} +`)) {
      pieces.push(piece);
      piece = "";
    }
    piece += word;
  }
  pieces.push(piece);
  return [head, ...pieces.map((p, i) => `${indent}${str(p)}${i < pieces.length - 1 ? " +" : tail}`)];
}

/** An object literal's fields on one line if it fits, else the last `rest` fields on a line of their own. */
function entry(indent: string, fields: string[], rest: number): string[] {
  const one = `${indent}{ ${fields.join(", ")} },`;
  if (fits(one) || rest === 0) return [one];
  const head = fields.slice(0, fields.length - rest);
  return [`${indent}{ ${head.join(", ")},`, `${indent}  ${fields.slice(-rest).join(", ")} },`];
}

function manifest(): string {
  const imports = importsOf(readFileSync(REGISTRY, "utf8"));
  expect(
    imports.map((i) => i.from).every(Boolean),
    "every kind of the registry's list is imported from ../kinds/",
  ).toBe(true);
  expect(imports.length, "the registry's list, as read from its source").toBe(KINDS.length);
  const cards = KINDS.map((kind, i) => {
    const { name, from } = imports[i]!;
    const ops = kind.ops.map((op) => {
      const limits = [
        ...(op.maxBodyBytes ? [`maxBodyBytes: ${op.maxBodyBytes}`] : []),
        ...(op.rawBody ? ["rawBody: true"] : []),
      ];
      const fields = [`name: ${str(op.name)}`, `method: ${str(op.method)}`, `path: ${str(op.path)}`, ...limits];
      return entry("      ", fields, limits.length);
    });
    const own = ownRoutes(kind).map((r) => `{ method: ${str(r.method)}, path: ${str(r.path)} }`);
    return [
      "  {",
      `    kind: ${str(kind.kind)}, family: ${str(kind.family)},`,
      ...literal("    summary:", kind.summary, ","),
      `    load: () => import(${str(from)}).then((m) => m.${name}),`,
      ...(fits(`    ownRoutes: [${own.join(", ")}],`)
        ? [`    ownRoutes: [${own.join(", ")}],`]
        : ["    ownRoutes: [", ...own.map((r) => `      ${r},`), "    ],"]),
      "    ops: [",
      ...ops.flat(),
      "    ],",
      "  },",
    ].join("\n");
  });
  return `/**
 * Generated from the registry (src/resources/registry.ts) by \`npm run manifests\`: do not edit.
 * What the worker knows of each kind before it loads the kind's module (resources/kinds.ts): its name,
 * family and summary, the method and path of every route it has, with an operation's body limit, and how
 * to load it. test/node/kind-manifest.test.ts fails when this is out of date.
 */
import type { KindCard } from "../kind/kind";

export const KIND_CARDS: readonly KindCard[] = [
${cards.join("\n")}
];
`;
}

it("is the registry's, as generated", () => {
  const expected = manifest();
  if (process.env.WRITE_MANIFESTS === "1") writeFileSync(FILE, expected);
  else expect(readFileSync(FILE, "utf8"), "the kind manifest is out of date: npm run manifests").toBe(expected);
});

it("loads the very kinds the registry lists", async () => {
  expect(KIND_CARDS.map((c) => c.kind)).toEqual(KINDS.map((k) => k.kind));
  for (const [i, card] of KIND_CARDS.entries()) expect(await card.load(), card.kind).toBe(KINDS[i]);
});
