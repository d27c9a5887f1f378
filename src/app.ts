/** Builds the Hono app: middleware, then every route group, all generated from the registry where they can be. */
import { OpenAPIHono } from "@hono/zod-openapi";
import { bodyLimit } from "hono/body-limit";
import { cors } from "hono/cors";
import { HTTPException } from "hono/http-exception";
import type { AppEnv } from "./env";
import { AppError, onError, problemResponse, validationError, type ErrorCode } from "./http/errors";
import { requestId } from "./http/request-id";
import { rateLimit } from "./http/rate-limit";
import { idempotency } from "./http/idempotency";
import { IDEMPOTENT_PATHS, RATE_LIMITED_PATHS } from "./http/api-paths";
import { registerKindRoutes } from "./resources/kind-routes";
import { apiBodyLimit, jsonDepthLimit } from "./http/body-limits";
import { registerDownloadRoutes } from "./resources/downloads";
import { registerPublicRoutes } from "./resources/public-routes";
import { registerDeliveryRoutes } from "./resources/delivery-routes";
import { registerLifecycleRoutes } from "./resources/lifecycle-routes";
import { registerMoneyRoutes } from "./money/routes";
import { registerReceiptRoutes } from "./money/receipts";
import { registerOAuthRoutes } from "./auth/oauth-routes";
import { registerAsk } from "./ask";
import { registerSite } from "./site";
import { registerMcpRoutes } from "./mcp/routes";
import { registerOpenApi } from "./openapi/document";


const HTTP_EXCEPTION_CODES: Record<number, { code: ErrorCode; detail?: string }> = {
  413: { code: "payload_too_large" },
  415: { code: "unsupported_media_type", detail: "Send the body as application/json (Content-Type: application/json)." },
};

export function buildApp(): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) throw validationError(result.error);
    },
  });
  app.use("*", requestId);
  // Credentials travel in headers, never cookies, so any origin may call.
  const corsFor = cors({ origin: "*", exposeHeaders: ["X-Request-Id", "PAYMENT-REQUIRED", "PAYMENT-RESPONSE", "X-PAYMENT-RESPONSE", "WWW-Authenticate", "Retry-After", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "Idempotent-Replayed", "ETag", "Content-Range", "Repr-Digest"] });
  // A plain OPTIONS to a public address is the kind's to answer (a bin records it); preflights are answered here.
  app.use("*", (c, next) => (c.req.method === "OPTIONS" && c.req.path.startsWith("/p/") && !c.req.header("access-control-request-method") ? next() : corsFor(c, next)));
  // Before any other work, so a refused caller costs as little as possible.
  for (const path of RATE_LIMITED_PATHS) app.use(path, rateLimit);

  // API.md §3: JSON bodies up to 1 MiB unless a kind says more (those kinds stream their own routes).
  app.use("/oauth/*", bodyLimit({ maxSize: 16 * 1024 }));
  // Public addresses: each route of a kind's face declares its own limit (resources/public-routes.ts).
  app.use("/v1/*", apiBodyLimit);
  app.use("/v1/*", jsonDepthLimit);
  // API.md §3: Idempotency-Key honoured on every POST of the API proper.
  for (const path of IDEMPOTENT_PATHS) app.use(path, idempotency);

  registerMoneyRoutes(app);
  registerReceiptRoutes(app);
  registerOAuthRoutes(app);
  registerLifecycleRoutes(app);
  registerKindRoutes(app);
  registerDeliveryRoutes(app);
  registerPublicRoutes(app);
  registerDownloadRoutes(app);
  registerAsk(app);
  registerSite(app);
  registerMcpRoutes(app);
  registerOpenApi(app);

  app.notFound((c) => problemResponse(new AppError("not_found", `No route for ${c.req.method} ${new URL(c.req.url).pathname}.`), c));
  app.onError((err, c) => {
    // Hono's own refusals (malformed JSON, wrong content type) become problems like every other error.
    if (err instanceof HTTPException && err.status < 500) {
      const mapped = HTTP_EXCEPTION_CODES[err.status] ?? { code: "invalid_request" };
      return problemResponse(new AppError(mapped.code, mapped.detail ?? (err.message || "The request could not be read.")), c);
    }
    return onError(err, c);
  });
  return app;
}
