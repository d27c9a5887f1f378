/**
 * The pages for humans and the files they load. The landing page, the reference and its files are plain
 * routes (not part of the API, so not in the OpenAPI document); the error pages are in it, since an
 * agent reads them too.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import { serviceUrls } from "../http/urls";
import { docsPage, vendorAsset } from "./docs";
import { landingPage } from "./landing";
import { loadAllKinds } from "../resources/kinds";
import { registerErrorPages } from "./error-pages";

export function registerSite(app: OpenAPIHono<AppEnv>): void {
  // The page lists every kind with its price (kinds-table.ts): they are loaded first (resources/kinds.ts).
  app.get("/", async (c) => {
    await loadAllKinds();
    return landingPage(c.env.SERVICE_NAME, serviceUrls(c).baseUrl);
  });
  app.get("/docs", (c) => docsPage(c.env.SERVICE_NAME, serviceUrls(c).baseUrl));
  app.get("/vendor/*", vendorAsset);
  registerErrorPages(app);
}
