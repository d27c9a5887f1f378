/**
 * Liveness and readiness. `/health` answers from the isolate alone (no binding touched), for a load
 * balancer or an uptime check. `/v1/admin/health`, behind the operator token, asks every binding and
 * peer the service needs (probes.ts) and answers 200 only when none fails: `npm run doctor` prints it.
 */
import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import { errorResponses, jsonResponse } from "../openapi/responses";
import { ADMIN, ADMIN_ERRORS } from "../ask/admin";
import {
  bucket,
  configuration,
  database,
  durableObjects,
  egress,
  engines,
  keys,
  queue,
  settlement,
  type Probe,
} from "./probes";

const VERSION = "1.0.0";

const liveness = z
  .object({
    status: z.literal("ok"),
    service: z.string(),
    version: z.string(),
  })
  .openapi("Liveness");

const probe = z.object({
  name: z
    .string()
    .describe("What was asked: configuration, d1, r2, queue, durable_objects, engine, egress_proxy, keys, settlement."),
  status: z
    .enum(["ok", "warn", "fail"])
    .describe(
      "`fail`: a part the service needs does not answer; `warn`: an optional part is not configured (its " +
        "routes answer 503).",
    ),
  detail: z.string(),
  version: z
    .string()
    .optional()
    .describe(
      "The part's version where it tells one: the last migration applied, an engine's version, the proxy's " +
        "Server header.",
    ),
});
const readiness = z
  .object({
    status: z.enum(["ready", "not_ready"]),
    checked_at: z.string(),
    duration_ms: z.int(),
    checks: z.array(probe),
  })
  .openapi("Readiness");

export async function readinessReport(env: AppEnv["Bindings"]): Promise<z.infer<typeof readiness>> {
  const started = Date.now();
  const checks: Probe[] = (
    await Promise.all([
      configuration(env),
      database(env),
      bucket(env),
      queue(env),
      durableObjects(env),
      engines(env),
      egress(env),
      keys(env),
      settlement(env),
    ])
  ).flat();
  return {
    status: checks.some((c) => c.status === "fail") ? "not_ready" : "ready",
    checked_at: new Date(started).toISOString(),
    duration_ms: Date.now() - started,
    checks,
  };
}

export function registerHealthRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(
    createRoute({
      method: "get",
      path: "/health",
      operationId: "liveness",
      tags: ["Operator"],
      security: [],
      summary: "Liveness: the Worker answers (no binding is touched)",
      responses: { 200: jsonResponse("The Worker is up.", liveness) },
    }),
    (c) => {
      c.header("Cache-Control", "no-store");
      return c.json({ status: "ok" as const, service: c.env.SERVICE_NAME, version: VERSION }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/admin/health",
      operationId: "admin_readiness",
      ...ADMIN,
      tags: ["Operator"],
      summary: "Operator: readiness of every binding, engine and key",
      description:
        "Asks D1 (reachable, migrated to the latest migration), R2, the delivery queue, both Durable " +
        "Object classes, each engine and the egress proxy (with their versions), the keys and the " +
        "settlement path. 200 when nothing fails, 503 with the same report otherwise.",
      responses: {
        200: jsonResponse("Ready.", readiness),
        503: jsonResponse("Not ready: the report says which part failed.", readiness),
        ...errorResponses(ADMIN_ERRORS),
      },
    }),
    async (c) => {
      const report = await readinessReport(c.env);
      return c.json(report, report.status === "ready" ? 200 : 503);
    },
  );
}
