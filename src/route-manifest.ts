/**
 * Generated from the route groups (test/node/route-manifest.test.ts lists them) by `npm run manifests`: do not
 * edit. Every registration each group's register function makes, in order (method, path, and whether it is a
 * middleware), so app.ts registers stand-ins for them at start-up and the group's module is imported on first use
 * (lazy-routes.ts). test/node/route-manifest.test.ts fails when this is out of date.
 */
import type { RouteGroupCard } from "./lazy-routes";

export const ROUTE_GROUPS = {
  money: {
    load: () => import("./money/routes").then((m) => m.registerMoneyRoutes),
    routes: [
      ["POST", "/v1/credits", true],
      ["POST", "/v1/credits", true],
      ["POST", "/v1/credits", false],
      ["GET", "/v1/credits/balance", false],
      ["POST", "/v1/credits/subtokens", true],
      ["POST", "/v1/credits/subtokens", true],
      ["POST", "/v1/credits/subtokens", false],
      ["GET", "/v1/prices", false],
    ],
  },
  receipts: {
    load: () => import("./money/receipts").then((m) => m.registerReceiptRoutes),
    routes: [
      ["GET", "/v1/receipts", true],
      ["GET", "/v1/receipts", false],
    ],
  },
  oauth: {
    load: () => import("./auth/oauth-routes").then((m) => m.registerOAuthRoutes),
    routes: [
      ["POST", "/oauth/token", false],
      ["GET", "/.well-known/oauth-authorization-server", false],
      ["GET", "/.well-known/oauth-protected-resource", false],
      ["GET", "/.well-known/jwks.json", false],
    ],
  },
  lifecycle: {
    load: () => import("./resources/lifecycle-routes").then((m) => m.registerLifecycleRoutes),
    routes: [
      ["GET", "/v1/resources/:id", true],
      ["GET", "/v1/resources/:id", false],
      ["POST", "/v1/resources/:id/extend", true],
      ["POST", "/v1/resources/:id/extend", true],
      ["POST", "/v1/resources/:id/extend", true],
      ["POST", "/v1/resources/:id/extend", false],
      ["GET", "/v1/resources/:id/export", true],
      ["GET", "/v1/resources/:id/export", false],
      ["DELETE", "/v1/resources/:id", true],
      ["DELETE", "/v1/resources/:id", false],
    ],
  },
  tokens: {
    load: () => import("./resources/token-routes").then((m) => m.registerTokenRoutes),
    routes: [
      ["POST", "/v1/resources/:id/tokens", true],
      ["POST", "/v1/resources/:id/tokens", true],
      ["POST", "/v1/resources/:id/tokens", true],
      ["POST", "/v1/resources/:id/tokens", false],
      ["GET", "/v1/resources/:id/tokens", true],
      ["GET", "/v1/resources/:id/tokens", true],
      ["GET", "/v1/resources/:id/tokens", false],
      ["DELETE", "/v1/resources/:id/tokens/:token_id", true],
      ["DELETE", "/v1/resources/:id/tokens/:token_id", false],
    ],
  },
  deliveries: {
    load: () => import("./resources/delivery-routes").then((m) => m.registerDeliveryRoutes),
    routes: [
      ["GET", "/v1/:kind/:id/deliveries", true],
      ["GET", "/v1/:kind/:id/deliveries", true],
      ["GET", "/v1/:kind/:id/deliveries", false],
      ["POST", "/v1/:kind/:id/deliveries/:delivery_id/retry", true],
      ["POST", "/v1/:kind/:id/deliveries/:delivery_id/retry", false],
    ],
  },
  downloads: {
    load: () => import("./kind/downloads").then((m) => m.registerDownloadRoutes),
    routes: [
      ["GET", "/v1/downloads/*", false],
      ["HEAD", "/v1/downloads/*", false],
    ],
  },
  sandbox: {
    load: () => import("./sandbox/routes").then((m) => m.registerSandboxRoutes),
    routes: [
      ["POST", "/v1/sandboxes", true],
      ["POST", "/v1/sandboxes", true],
      ["POST", "/v1/sandboxes", false],
      ["GET", "/v1/sandboxes/:id", true],
      ["GET", "/v1/sandboxes/:id", false],
      ["DELETE", "/v1/sandboxes/:id", true],
      ["DELETE", "/v1/sandboxes/:id", false],
      ["POST", "/v1/sandboxes/:id/clock", true],
      ["POST", "/v1/sandboxes/:id/clock", true],
      ["POST", "/v1/sandboxes/:id/clock", true],
      ["POST", "/v1/sandboxes/:id/clock", false],
      ["GET", "/v1/sandboxes/:id/timeline", true],
      ["GET", "/v1/sandboxes/:id/timeline", true],
      ["GET", "/v1/sandboxes/:id/timeline", false],
      ["GET", "/v1/sandboxes/:id/deliveries", true],
      ["GET", "/v1/sandboxes/:id/deliveries", true],
      ["GET", "/v1/sandboxes/:id/deliveries", false],
    ],
  },
  ask: {
    load: () => import("./ask/index").then((m) => m.registerAsk),
    routes: [
      ["POST", "/v1/feature-requests", true],
      ["POST", "/v1/feature-requests", true],
      ["POST", "/v1/feature-requests", false],
      ["POST", "/v1/abuse-reports", true],
      ["POST", "/v1/abuse-reports", true],
      ["POST", "/v1/abuse-reports", false],
      ["ALL", "/v1/admin/*", true],
      ["GET", "/v1/admin/feature-requests", true],
      ["GET", "/v1/admin/feature-requests", false],
      ["GET", "/v1/admin/abuse-reports", true],
      ["GET", "/v1/admin/abuse-reports", false],
      ["GET", "/v1/admin/public-addresses/:public_id", true],
      ["GET", "/v1/admin/public-addresses/:public_id", false],
      ["POST", "/v1/admin/public-addresses/:public_id/disable", true],
      ["POST", "/v1/admin/public-addresses/:public_id/disable", true],
      ["POST", "/v1/admin/public-addresses/:public_id/disable", true],
      ["POST", "/v1/admin/public-addresses/:public_id/disable", false],
      ["POST", "/v1/admin/public-addresses/:public_id/enable", true],
      ["POST", "/v1/admin/public-addresses/:public_id/enable", false],
    ],
  },
  operator: {
    load: () => import("./operator/index").then((m) => m.registerOperator),
    routes: [
      ["GET", "/health", false],
      ["GET", "/v1/admin/health", false],
      ["GET", "/v1/admin/stats", true],
      ["GET", "/v1/admin/stats", false],
      ["POST", "/v1/admin/refunds", true],
      ["POST", "/v1/admin/refunds", true],
      ["POST", "/v1/admin/refunds", false],
      ["GET", "/v1/admin/deliveries/dead", true],
      ["GET", "/v1/admin/deliveries/dead", false],
      ["POST", "/v1/admin/deliveries/:delivery_id/retry", true],
      ["POST", "/v1/admin/deliveries/:delivery_id/retry", false],
      ["ALL", "/admin", true],
      ["ALL", "/admin/*", true],
      ["GET", "/admin", false],
      ["GET", "/admin/page.js", false],
      ["GET", "/admin/page.css", false],
    ],
  },
  site: {
    load: () => import("./site/index").then((m) => m.registerSite),
    routes: [
      ["GET", "/", false],
      ["GET", "/docs", false],
      ["GET", "/vendor/*", false],
      ["GET", "/errors/:code", true],
      ["GET", "/errors/:code", false],
    ],
  },
} satisfies Record<string, RouteGroupCard>;
