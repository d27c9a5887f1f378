/**
 * The OpenAPI 3.1 document, assembled from the routes' own zod schemas. What every API
 * operation shares because of middleware (rate limits, Idempotency-Key) is added once,
 * to the generated document, rather than repeated in each route.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { ERROR_CODES } from "../http/errors";
import { MAX_KEY_LENGTH } from "../http/idempotency";
import { TAG_DESCRIPTIONS } from "./tags";
import { covers, IDEMPOTENT_PATHS, RATE_LIMITED_PATHS } from "../http/api-paths";

type Document = ReturnType<OpenAPIHono<AppEnv>["getOpenAPI31Document"]>;
type Operation = NonNullable<NonNullable<NonNullable<Document["paths"]>[string]>["post"]>;

const METHODS = ["get", "put", "post", "delete", "patch"] as const;
const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });
const RATE_LIMIT_HEADERS = {
  "RateLimit-Limit": ref("headers", "RateLimit-Limit"),
  "RateLimit-Remaining": ref("headers", "RateLimit-Remaining"),
  "RateLimit-Reset": ref("headers", "RateLimit-Reset"),
};

function problemResponse(status: number) {
  const codes = Object.entries(ERROR_CODES).filter(([, [s]]) => s === status).map(([code]) => `\`${code}\``);
  return { description: codes.join(", "), content: { "application/problem+json": { schema: ref("schemas", "Problem") } } };
}

/** Every API response carries the RateLimit-* headers, a 429 adds Retry-After; every POST takes an Idempotency-Key. */
function addMiddlewareContract(op: Operation, method: (typeof METHODS)[number], idempotent: boolean): void {
  const statuses = idempotent ? [400, 409, 422, 429] : [429];
  const responses = (op.responses ??= {});
  for (const status of statuses) responses[String(status)] ??= problemResponse(status);
  for (const [status, response] of Object.entries(responses)) {
    if ("$ref" in response) continue;
    const replayed = idempotent && status.startsWith("2") ? { "Idempotent-Replayed": ref("headers", "Idempotent-Replayed") } : {};
    const retry = status === "429" ? { "Retry-After": ref("headers", "Retry-After") } : {};
    response.headers = { ...response.headers, ...RATE_LIMIT_HEADERS, ...retry, ...replayed };
  }
  if (idempotent) op.parameters = [...(op.parameters ?? []), ref("parameters", "IdempotencyKey")];
}

function withMiddlewareContract(doc: Document): Document {
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    if (!covers(RATE_LIMITED_PATHS, path)) continue;
    for (const method of METHODS) {
      const op = item[method];
      if (op) addMiddlewareContract(op, method, method === "post" && covers(IDEMPOTENT_PATHS, path));
    }
  }
  return doc;
}

function registerMiddlewareComponents(registry: OpenAPIHono<AppEnv>["openAPIRegistry"]): void {
  const integer = (description: string) => ({ description, schema: { type: "integer" as const, minimum: 0 } });
  registry.registerComponent("headers", "RateLimit-Limit", integer("Requests allowed per minute under the tighter of the two limits (per credential, per client IP)."));
  registry.registerComponent("headers", "RateLimit-Remaining", integer(
    "Requests left in the current window: an upper bound counted by the serving instance (other instances count too), 0 once refused.",
  ));
  registry.registerComponent("headers", "RateLimit-Reset", integer("Seconds until the current one-minute window ends."));
  registry.registerComponent("headers", "Retry-After", integer("Seconds to wait before retrying."));
  registry.registerComponent("headers", "Idempotent-Replayed", {
    description: "`true` when this is the stored answer to an earlier request with the same Idempotency-Key.",
    schema: { type: "string", enum: ["true"] },
  });
  registry.registerComponent("parameters", "IdempotencyKey", {
    name: "Idempotency-Key", in: "header", required: false,
    description:
      "Makes the POST safe to retry: within 24 h, the same key with the same method, path and body (and the same credential, " +
      "x402 payer or, without either, client address) replays the first 2xx answer with `Idempotent-Replayed: true` and " +
      "charges nothing; another request with the key is 422 `idempotency_mismatch`; while the first runs, 409 " +
      "`idempotency_in_flight`. A failed call (4xx, 5xx) frees the key for a retry.",
    schema: { type: "string", minLength: 1, maxLength: MAX_KEY_LENGTH },
  });
}

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

  registerMiddlewareComponents(registry);

  const config = (c: Context<AppEnv>) => ({
    openapi: "3.1.0",
    info: {
      title: c.env.SERVICE_NAME,
      version: "1.0.0",
      description: "Persistence for autonomous AI agents. Every resource has a TTL and a management token returned once. Pay per call with x402 or with a prepaid credit token.",
      license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
    },
    servers: [{ url: c.env.BASE_URL || new URL(c.req.url).origin }],
    tags: TAG_DESCRIPTIONS,
  });
  app.get("/openapi.json", (c) => c.json(withMiddlewareContract(app.getOpenAPI31Document(config(c)))));
}
