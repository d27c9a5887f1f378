/**
 * The OpenAPI 3.1 document, assembled from the routes' own zod schemas. What every API
 * operation shares because of middleware (rate limits, Idempotency-Key) is added once,
 * to the generated document, rather than repeated in each route; then the registry's
 * examples go in, and what repeats moves to components (compact.ts). Served whole or
 * sliced by kind (slice.ts), with /llms.txt as its index (llms.ts).
 */
import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { ERROR_CODES } from "../http/error-codes";
import { MAX_KEY_LENGTH } from "../http/idempotency";
import { TAG_DESCRIPTIONS } from "./tags";
import { covers, IDEMPOTENT_PATHS, RATE_LIMITED_PATHS } from "../http/api-paths";
import { FAMILIES, kindsNamed } from "../resources/kinds";
import { errorResponses } from "./responses";
import { compact, outline } from "./compact";
import { withExamples } from "./examples";
import { slice } from "./slice";
import { llmsTxt } from "./llms";

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
  const codes = Object.entries(ERROR_CODES)
    .filter(([, [s]]) => s === status)
    .map(([code]) => `\`${code}\``);
  return {
    description: codes.join(", "),
    content: { "application/problem+json": { schema: ref("schemas", "Problem") } },
  };
}

/**
 * Every API response carries the RateLimit-* headers (said once in `info`, and shown on the 429 that
 * adds Retry-After); every POST takes an Idempotency-Key (whose description tells of the
 * `Idempotent-Replayed` header of a replay).
 */
function addMiddlewareContract(op: Operation, idempotent: boolean): void {
  const statuses = idempotent ? [400, 409, 422, 429] : [429];
  const responses = (op.responses ??= {});
  for (const status of statuses) responses[String(status)] ??= problemResponse(status);
  const limited = responses["429"];
  if (limited && !("$ref" in limited))
    limited.headers = { ...limited.headers, ...RATE_LIMIT_HEADERS, "Retry-After": ref("headers", "Retry-After") };
  if (idempotent) op.parameters = [...(op.parameters ?? []), ref("parameters", "IdempotencyKey")];
}

function withMiddlewareContract(doc: Document): Document {
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    if (!covers(RATE_LIMITED_PATHS, path)) continue;
    for (const method of METHODS) {
      const op = item[method];
      if (op) addMiddlewareContract(op, method === "post" && covers(IDEMPOTENT_PATHS, path));
    }
  }
  return doc;
}

function registerMiddlewareComponents(registry: OpenAPIHono<AppEnv>["openAPIRegistry"]): void {
  const integer = (description: string) => ({ description, schema: { type: "integer" as const, minimum: 0 } });
  registry.registerComponent(
    "headers",
    "RateLimit-Limit",
    integer("Requests allowed per minute under the tighter of the two limits (per credential, per client IP)."),
  );
  registry.registerComponent(
    "headers",
    "RateLimit-Remaining",
    integer(
      "Requests left in the current window: an upper bound counted by the serving instance (other " +
        "instances count too), 0 once refused.",
    ),
  );
  registry.registerComponent(
    "headers",
    "RateLimit-Reset",
    integer("Seconds until the current one-minute window ends."),
  );
  registry.registerComponent("headers", "Retry-After", integer("Seconds to wait before retrying."));
  registry.registerComponent("parameters", "IdempotencyKey", {
    name: "Idempotency-Key",
    in: "header",
    required: false,
    description:
      "Makes a POST safe to retry: for 24 h the same key, request and caller replays the first 2xx answer " +
      "(`Idempotent-Replayed: true`), charging nothing; another request with the key is 422 " +
      "`idempotency_mismatch`; while the first runs, 409 `idempotency_in_flight`; a 4xx or 5xx frees the " +
      "key. A credit-paid create whose answer was lost is found by the retry, not made twice.",
    schema: { type: "string", minLength: 1, maxLength: MAX_KEY_LENGTH },
  });
}

export function registerOpenApi(app: OpenAPIHono<AppEnv>): void {
  const registry = app.openAPIRegistry;
  registry.registerComponent("securitySchemes", "credit", {
    type: "http",
    scheme: "bearer",
    description: "A credit token (zv_…) or an OAuth access token.",
  });
  registry.registerComponent("securitySchemes", "management", {
    type: "http",
    scheme: "bearer",
    description: "The resource's management token (zvm_…), returned once at creation.",
  });
  registry.registerComponent("securitySchemes", "creditHeader", {
    type: "apiKey",
    in: "header",
    name: "X-CREDIT-TOKEN",
    description: "A credit token paying for an operation authorized by a management token.",
  });
  registry.registerComponent("securitySchemes", "x402", {
    type: "apiKey",
    in: "header",
    name: "X-PAYMENT",
    description: "x402 v1 payment: base64 JSON of a signed EIP-3009 USDC authorization.",
  });
  registry.registerComponent("securitySchemes", "x402v2", {
    type: "apiKey",
    in: "header",
    name: "PAYMENT-SIGNATURE",
    description: "x402 v2 payment payload (base64 JSON).",
  });

  registerMiddlewareComponents(registry);

  const config = (server: string) => ({
    openapi: "3.1.0",
    info: {
      title: "",
      version: "1.0.0",
      description:
        "Persistence for autonomous AI agents. Every resource has a TTL and a management token returned " +
        "once. Pay per call with x402 or with a prepaid credit token. Operations on a resource are " +
        "authorized by its management token and paid with `X-CREDIT-TOKEN` or x402. Every response carries " +
        "`RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`; every error is " +
        "`application/problem+json`. Outbound requests (under `webhooks`) are signed per Standard Webhooks " +
        "with the resource's `signing_secret`: a configured call (a wakeup's, a schedule's tick) carries " +
        "the method, headers and body its creator set; an event carries the envelope `{ type, id, " +
        "resource_id, created_at, data }`. `?kinds=` gives a slice of this document for some kinds or " +
        "families (e.g. `?kinds=counters,queues` or `?kinds=memory`), a valid document on its own; " +
        "`/llms.txt` lists them. This whole document is the index, kept small: it leaves out the long " +
        "descriptions of operations and fields, the success responses' body schemas, and the 409/413/415 " +
        "answers (said once, under `default`); every slice carries them all, and `?kinds=all` is the whole " +
        "document with them. `/docs` renders this document for people. Every request body and parameter " +
        "carries an example that works as written.",
      license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
    },
    servers: [{ url: server }],
    tags: TAG_DESCRIPTIONS,
  });
  // Built once per server URL and isolate: the registry cannot change under a running worker.
  const built = new Map<string, { full: Document; outline: Document }>();
  const documents = (c: Context<AppEnv>) => {
    const server = c.env.BASE_URL || new URL(c.req.url).origin;
    let docs = built.get(server);
    if (!docs) {
      const full = compact(withExamples(withMiddlewareContract(app.getOpenAPI31Document(config(server)))));
      built.set(server, (docs = { full, outline: outline(full) }));
    }
    const titled = (doc: Document) => ({ ...doc, info: { ...doc.info, title: c.env.SERVICE_NAME } });
    return { full: titled(docs.full), outline: titled(docs.outline) };
  };
  registerReferenceRoutes(app, documents);
}

function registerReferenceRoutes(
  app: OpenAPIHono<AppEnv>,
  documents: (c: Context<AppEnv>) => { full: Document; outline: Document },
): void {
  const kindsQuery = z.object({
    kinds: z
      .string()
      .max(2000)
      .optional()
      .openapi({ example: "counters,queues" })
      .describe(
        `Only these kinds or families (comma-separated; ${FAMILIES.join(", ")}, or a kind): a valid ` +
          `document on its own, with the routes every resource shares, fields described. \`all\`: the whole ` +
          `document with every field's description.`,
      ),
  });
  app.openapi(
    createRoute({
      method: "get",
      path: "/openapi.json",
      tags: ["Reference"],
      operationId: "openapi_document",
      security: [],
      summary:
        "This OpenAPI 3.1 document: the whole as an index (no descriptions or response schemas), or a " +
        "slice of it, complete (free)",
      request: { query: kindsQuery },
      responses: {
        200: {
          description: "The document.",
          content: { "application/json": { schema: z.record(z.string(), z.unknown()) } },
        },
        ...errorResponses([400]),
      },
    }),
    (c) => {
      const { kinds } = c.req.valid("query");
      const docs = documents(c);
      if (kinds === undefined) return c.json(docs.outline, 200);
      return c.json(kinds === "all" ? docs.full : slice(docs.full, kindsNamed(kinds, "kinds")), 200);
    },
  );
  app.openapi(
    createRoute({
      method: "get",
      path: "/llms.txt",
      tags: ["Reference"],
      operationId: "llms_txt",
      security: [],
      summary:
        "What this service is, how to pay, and a line per kind linking its slice of the document (llms.txt, free)",
      responses: {
        200: {
          description: "Markdown, per the llms.txt convention.",
          content: { "text/markdown": { schema: z.string() } },
        },
        ...errorResponses([]),
      },
    }),
    (c) => c.body(llmsTxt(c), 200, { "content-type": "text/markdown; charset=utf-8" }),
  );
}
