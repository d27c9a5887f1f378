/**
 * docs/catalogue.md is the registry's: one row per kind, by family, with its summary, its operations,
 * its lifetime and its prices as GET /v1/prices gives them. Built here from the same registry and
 * price list the worker serves; `npm run docs:catalogue` rewrites the file after a change.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { expect, it } from "vitest";
import { FAMILIES, KINDS } from "../../src/resources/registry";
import { priceList, type PriceLine } from "../../src/money/prices";
import { loadAllKinds } from "../../src/resources/kinds";
import { TAGS } from "../../src/openapi/tags";
import type { AnyKind } from "../../src/kind/kind";

const FILE = "docs/catalogue.md";

const cell = (s: string) =>
  s
    .replace(/\|/g, "\\|")
    .replace(/\s*\n\s*/g, " ")
    .trim();

/** A lifetime as people say it: whole days, else hours, else minutes, else seconds. */
function duration(seconds: number): string {
  for (const [unit, size] of [
    ["d", 86400],
    ["h", 3600],
    ["min", 60],
  ] as const)
    if (seconds % size === 0) return `${seconds / size} ${unit}`;
  return `${seconds} s`;
}

const usd = (n: number) => `$${n}`;

function row(kind: AnyKind, lines: Map<string, PriceLine>): string {
  const create = lines.get(`${kind.kind}.create`)!;
  const ops = kind.ops.map((op) => {
    const line = lines.get(`${kind.kind}.${op.name}`)!;
    const below = line.path.slice(`/v1/${kind.kind}/{id}`.length);
    return `\`${op.name}\` ${line.method}${below ? ` \`${below}\`` : ""} ${usd(line.price_usd)}`;
  });
  const ttl = `${duration(create.default_ttl_seconds!)} / ${duration(create.max_ttl_seconds!)}`;
  const address = kind.public ? "yes" : "";
  return (
    `| \`${kind.kind}\` | **${cell(kind.title)}**: ${cell(kind.summary)} | ${ops.join("<br>")} | ${ttl} | ` +
    `${usd(create.price_usd)} | ${address} |`
  );
}

function catalogueMarkdown(): string {
  const lines = new Map(priceList().map((l) => [l.operation, l]));
  const families = FAMILIES.map((family) => {
    const kinds = KINDS.filter((k) => k.family === family);
    return [
      `## ${TAGS[family]}`,
      "",
      "| kind | what it is | operations (below `/v1/{kind}/{id}`), price per call | TTL default / max | " +
        "per day | public address |",
      "|---|---|---|---|---|---|",
      ...kinds.map((k) => row(k, lines)),
    ].join("\n");
  });
  return [
    "# Catalogue of kinds",
    "",
    "<!-- Generated from the registry (src/resources/registry.ts) by test/node/docs-catalogue.test.ts: do " +
      "not edit by hand; `npm run docs:catalogue` rewrites it. -->",
    "",
    `Every kind the service offers (${KINDS.length}), by family, as the registry declares it. A resource ` +
      `is created with`,
    "`POST /v1/{kind}` (its life charged per started day at the day rate; `extend` costs the same) and operated",
    "below `/v1/{kind}/{id}` with its management token; each operation costs the price shown, per call. " +
      "`GET /v1/prices`",
    "is the same list, machine-readable, with each kind's limits; what each kind must do is in " +
      "[kinds.md](kinds.md), and",
    "the request and answer of every operation in `/openapi.json?kinds={kind}`.",
    "",
    families.join("\n\n"),
    "",
  ].join("\n");
}

it("lists every kind of the registry, with its operations, lifetime and prices", async () => {
  await loadAllKinds(); // the price list reads the kinds as the worker loads them (src/resources/kinds.ts)
  const expected = catalogueMarkdown();
  if (process.env.WRITE_DOCS === "1") writeFileSync(FILE, expected);
  let current = "";
  try {
    current = readFileSync(FILE, "utf8");
  } catch {
    // missing: the comparison below says how to make it
  }
  expect(current, `${FILE} is out of date: npm run docs:catalogue`).toBe(expected);
});
