/** Builds the Hono apps: middleware, then every route group, all generated from the registry where they can be. */
import { OpenAPIHono } from "@hono/zod-openapi";
import { Hono, type Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { HTTPException } from "hono/http-exception";
import type { AppEnv } from "./env";
import { AppError, onError, problemResponse, validationError } from "./http/errors";
import type { ErrorCode } from "./http/error-codes";
import { requestId } from "./http/request-id";
import { routeTable, type RouteTable } from "./http/route-table";
import { corsForAll } from "./http/cors";
import { rateLimit } from "./http/rate-limit";
import { idempotency } from "./http/idempotency";
import { IDEMPOTENT_PATHS, RATE_LIMITED_PATHS } from "./http/api-paths";
import { registerKindRoutes } from "./resources/kind-routes";
import { apiBodyLimit, jsonDepthLimit } from "./http/body-limits";
import { documentPublicPaths, registerPublicRoutes } from "./resources/public-routes";
import { forgetWrittenResources } from "./resources/public-reuse";
import { registerMcpRoutes } from "./mcp/routes";
import { registerOpenApi } from "./openapi/document";
import { completeDocumentation } from "./openapi/deferred";
import { loadAllKinds } from "./resources/kinds";
import { registerLazily } from "./lazy-routes";
import { ROUTE_GROUPS } from "./route-manifest";
import { configGuard, GUARDED_PATHS } from "./operator/config-guard";
import { requestLog } from "./operator/request-log";

const HTTP_EXCEPTION_CODES: Record<number, { code: ErrorCode; detail?: string }> = {
  413: { code: "payload_too_large" },
  415: {
    code: "unsupported_media_type",
    detail: "Send the body as application/json (Content-Type: application/json).",
  },
};

/** What every request meets first, on either app: its id, its log line (and the operator's counts), and CORS. */
function greet(app: Hono<AppEnv>): void {
  app.use("*", requestId);
  app.use("*", requestLog);
  app.use("*", corsForAll);
  // Before any other work, so a refused caller costs as little as possible.
  for (const path of RATE_LIMITED_PATHS) app.use(path, rateLimit);
  // A deployment missing a setting it needs serves no route that could take money or sign.
  for (const path of GUARDED_PATHS) app.use(path, configGuard);
}

/**
 * A request no route took. With the app's route table: a plain OPTIONS to a known path is 204 with
 * its `Allow`, another method there 405 with it, and an unknown path a 404 naming the known paths
 * a typo or two away (or where the paths are listed).
 */
function unrouted(c: Context<AppEnv>, table: RouteTable | null): Response {
  const { pathname } = new URL(c.req.url);
  const method = c.req.method;
  const allow = table?.allowed(pathname);
  if (allow && method === "OPTIONS") return new Response(null, { status: 204, headers: { Allow: allow.join(", ") } });
  if (allow && !allow.includes(method)) {
    const takes = allow.filter((m) => m !== "HEAD" && m !== "OPTIONS").join(", ");
    return problemResponse(
      new AppError(
        "method_not_allowed",
        `${pathname} does not take ${method}; it takes ${takes} (see its entry in /openapi.json).`,
        { headers: { Allow: allow.join(", ") } },
      ),
      c,
    );
  }
  const near = table?.nearest(pathname) ?? [];
  const named = near.map((n) =>
    n.methods.includes(method)
      ? `\`${n.path}\``
      : `\`${n.path}\` (${n.methods.filter((m) => m !== "HEAD" && m !== "OPTIONS").join(", ")})`,
  );
  const hint = named.length
    ? `: did you mean ${named.join(" or ")}?`
    : ". Every path is in /openapi.json (one kind's: /openapi.json?kinds=counters; an index: /llms.txt).";
  return problemResponse(new AppError("not_found", `No route for ${method} ${pathname}${hint}`), c);
}

/** Every error as problem+json, Hono's own refusals (malformed JSON, wrong content type) included. */
function answerErrors(app: Hono<AppEnv>, table: (() => RouteTable) | null = null): void {
  app.notFound((c) => unrouted(c, table?.() ?? null));
  app.onError((err, c) => {
    if (err instanceof HTTPException && err.status < 500) {
      const mapped = HTTP_EXCEPTION_CODES[err.status] ?? { code: "invalid_request" };
      return problemResponse(
        new AppError(mapped.code, mapped.detail ?? (err.message || "The request could not be read.")),
        c,
      );
    }
    return onError(err, c);
  });
}

/**
 * The API, the site and everything documented in the OpenAPI document (public addresses too: their answers come from
 * buildPublicApp).
 */
export function buildApp(): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) throw validationError(result.error);
    },
  });
  greet(app);

  // docs/api.md#requests-and-conventions: JSON bodies up to 1 MiB unless a kind says more (those kinds stream their own
  // routes).
  app.use("/oauth/*", bodyLimit({ maxSize: 16 * 1024 }));
  app.use("/v1/*", apiBodyLimit);
  app.use("/v1/*", jsonDepthLimit);
  app.use("/v1/*", forgetWrittenResources);
  // docs/api.md#requests-and-conventions: Idempotency-Key honoured on every POST of the API proper.
  for (const path of IDEMPOTENT_PATHS) app.use(path, idempotency);
  // A request loads the kind it names (resources/kinds.ts); what answers about every kind loads them all first,
  // and the document and the MCP tools (which read its registry) have every kind's part written in first.
  app.use("/v1/prices", async (_c, next) => {
    await loadAllKinds();
    await next();
  });
  for (const path of ["/openapi.json", "/llms.txt", "/mcp"]) {
    app.use(path, async (_c, next) => {
      await completeDocumentation(app);
      await next();
    });
  }

  // Route groups whose modules load when first reached (lazy-routes.ts, route-manifest.ts): registered here as before.
  registerLazily(app, ROUTE_GROUPS.money);
  registerLazily(app, ROUTE_GROUPS.receipts);
  registerLazily(app, ROUTE_GROUPS.oauth);
  registerLazily(app, ROUTE_GROUPS.lifecycle);
  registerLazily(app, ROUTE_GROUPS.tokens);
  registerLazily(app, ROUTE_GROUPS.sandbox);
  registerKindRoutes(app);
  registerLazily(app, ROUTE_GROUPS.deliveries);
  documentPublicPaths(app);
  registerLazily(app, ROUTE_GROUPS.downloads);
  registerLazily(app, ROUTE_GROUPS.ask);
  // After the ask group, which puts the operator token's guard on /v1/admin/*.
  registerLazily(app, ROUTE_GROUPS.operator);
  registerLazily(app, ROUTE_GROUPS.site);
  registerMcpRoutes(app);
  registerOpenApi(app);
  // Built on the first request no route took, when every route is in place; the routes cannot change after.
  let table: RouteTable | undefined;
  answerErrors(app, () => (table ??= routeTable(app.routes)));
  return app;
}

/**
 * Public addresses, `/p/…`, in an app of their own: their traffic (a site's files, an inbox's
 * webhooks) is most of the requests and the cheapest, so it does not search the API's route table
 * of several hundred entries. The same middleware greets it.
 */
export function buildPublicApp(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  greet(app);
  // Each route of a kind's face declares its own body limit (resources/public-routes.ts).
  registerPublicRoutes(app);
  answerErrors(app);
  return app;
}
