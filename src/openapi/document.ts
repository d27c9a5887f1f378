/** The OpenAPI 3.1 document, assembled from the routes' own zod schemas. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import { TAG_DESCRIPTIONS } from "./tags";

export function registerOpenApi(app: OpenAPIHono<AppEnv>): void {
  const registry = app.openAPIRegistry;
  registry.registerComponent("securitySchemes", "credit", {
    type: "http", scheme: "bearer", description: "A credit token (zv_…) or an OAuth access token.",
  });
  registry.registerComponent("securitySchemes", "management", {
    type: "http", scheme: "bearer", description: "The resource's management token (zvm_…), returned once at creation.",
  });
  registry.registerComponent("securitySchemes", "creditHeader", {
    type: "apiKey", in: "header", name: "X-CREDIT-TOKEN", description: "A credit token paying for an operation authorized by a management token.",
  });
  registry.registerComponent("securitySchemes", "x402", {
    type: "apiKey", in: "header", name: "X-PAYMENT", description: "x402 v1 payment: base64 JSON of a signed EIP-3009 USDC authorization.",
  });
  registry.registerComponent("securitySchemes", "x402v2", {
    type: "apiKey", in: "header", name: "PAYMENT-SIGNATURE", description: "x402 v2 payment payload (base64 JSON).",
  });

  app.doc31("/openapi.json", (c) => ({
    openapi: "3.1.0",
    info: {
      title: c.env.SERVICE_NAME,
      version: "1.0.0",
      description: "Persistence for autonomous AI agents. Every resource has a TTL and a management token returned once. Pay per call with x402 or with a prepaid credit token.",
      license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
    },
    servers: [{ url: c.env.BASE_URL || new URL(c.req.url).origin }],
    tags: TAG_DESCRIPTIONS,
  }));
}
