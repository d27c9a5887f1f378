/** The two pages for humans and the files they load. Plain routes: they are not part of the API, so not in the OpenAPI document. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import { serviceUrls } from "../http/urls";
import { docsPage, vendorAsset } from "./docs";
import { landingPage } from "./landing";

export function registerSite(app: OpenAPIHono<AppEnv>): void {
  app.get("/", (c) => landingPage(c.env.SERVICE_NAME, serviceUrls(c).baseUrl));
  app.get("/docs", (c) => docsPage(c.env.SERVICE_NAME, serviceUrls(c).baseUrl));
  app.get("/vendor/*", vendorAsset);
}
