/** Builds the Hono app: middleware, then every route group, all generated from the registry where they can be. */
import { OpenAPIHono } from "@hono/zod-openapi";
import { cors } from "hono/cors";
import { HTTPException } from "hono/http-exception";
import type { AppEnv } from "./env";
import { AppError, onError, problemResponse, validationError } from "./http/errors";
import { requestId } from "./http/request-id";
import { registerKindRoutes } from "./resources/kind-routes";
import { registerLifecycleRoutes } from "./resources/lifecycle-routes";
import { registerMoneyRoutes } from "./money/routes";
import { registerOpenApi } from "./openapi/document";

export function buildApp(): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) throw validationError(result.error);
    },
  });
  app.use("*", requestId);
  // Credentials travel in headers, never cookies, so any origin may call.
  app.use("*", cors({ origin: "*", exposeHeaders: ["X-Request-Id", "PAYMENT-REQUIRED", "PAYMENT-RESPONSE", "X-PAYMENT-RESPONSE", "WWW-Authenticate", "Retry-After"] }));

  registerMoneyRoutes(app);
  registerLifecycleRoutes(app);
  registerKindRoutes(app);
  registerOpenApi(app);

  app.notFound((c) => problemResponse(new AppError("not_found", `No route for ${c.req.method} ${new URL(c.req.url).pathname}.`), c));
  app.onError((err, c) => {
    if (err instanceof HTTPException && err.status < 500) {
      const code = err.status === 413 ? "payload_too_large" : err.status === 415 ? "unsupported_media_type" : "invalid_request";
      return problemResponse(new AppError(code, err.message || "The request could not be read."), c);
    }
    return onError(err, c);
  });
  return app;
}
