/**
 * The route manifest (src/route-manifest.ts) is the route groups' own: for each group app.ts registers
 * lazily (src/lazy-routes.ts), every registration its register function makes, in order, and a loader that
 * imports that very function. `npm run manifests` rewrites it after a change to a group's routes.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { OpenAPIHono } from "@hono/zod-openapi";
import { expect, it } from "vitest";
import { routesOf, type RegisterRoutes } from "../../src/lazy-routes";
import { ROUTE_GROUPS } from "../../src/route-manifest";

const FILE = "src/route-manifest.ts";

/** The groups app.ts registers lazily, in its order: the module below src/ and the register function it exports. */
const GROUPS = {
  money: ["money/routes", "registerMoneyRoutes"],
  receipts: ["money/receipts", "registerReceiptRoutes"],
  oauth: ["auth/oauth-routes", "registerOAuthRoutes"],
  lifecycle: ["resources/lifecycle-routes", "registerLifecycleRoutes"],
  tokens: ["resources/token-routes", "registerTokenRoutes"],
  deliveries: ["resources/delivery-routes", "registerDeliveryRoutes"],
  downloads: ["kind/downloads", "registerDownloadRoutes"],
  sandbox: ["sandbox/routes", "registerSandboxRoutes"],
  ask: ["ask/index", "registerAsk"],
  operator: ["operator/index", "registerOperator"],
  site: ["site/index", "registerSite"],
} as const;

const registerOf = async ([module, name]: readonly [string, string]) =>
  ((await import(`../../src/${module}`)) as Record<string, RegisterRoutes>)[name]!;

async function manifest(): Promise<string> {
  const groups: string[] = [];
  for (const [group, [module, name]] of Object.entries(GROUPS)) {
    const scratch = new OpenAPIHono();
    (await registerOf([module, name]))(scratch as never);
    const routes = routesOf(scratch.routes).map(
      ([method, path, middleware]) => `      [${JSON.stringify(method)}, ${JSON.stringify(path)}, ${middleware}],`,
    );
    groups.push(
      [
        `  ${group}: {`,
        `    load: () => import(${JSON.stringify(`./${module}`)}).then((m) => m.${name}),`,
        "    routes: [",
        ...routes,
        "    ],",
        "  },",
      ].join("\n"),
    );
  }
  return `/**
 * Generated from the route groups (test/node/route-manifest.test.ts lists them) by \`npm run manifests\`: do not
 * edit. Every registration each group's register function makes, in order (method, path, and whether it is a
 * middleware), so app.ts registers stand-ins for them at start-up and the group's module is imported on first use
 * (lazy-routes.ts). test/node/route-manifest.test.ts fails when this is out of date.
 */
import type { RouteGroupCard } from "./lazy-routes";

export const ROUTE_GROUPS = {
${groups.join("\n")}
} satisfies Record<string, RouteGroupCard>;
`;
}

it("is the route groups', as generated", async () => {
  const expected = await manifest();
  if (process.env.WRITE_MANIFESTS === "1") writeFileSync(FILE, expected);
  else expect(readFileSync(FILE, "utf8"), "the route manifest is out of date: npm run manifests").toBe(expected);
});

it("loads the very register functions the groups export", async () => {
  expect(Object.keys(ROUTE_GROUPS)).toEqual(Object.keys(GROUPS));
  for (const [group, card] of Object.entries(ROUTE_GROUPS))
    expect(await card.load(), group).toBe(await registerOf(GROUPS[group as keyof typeof GROUPS]));
});
