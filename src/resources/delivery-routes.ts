/**
 * The attempt log of every resource's outbound calls and events (`GET /v1/{kind}/{id}/deliveries`)
 * with a manual retry, and the event types in the OpenAPI document's `webhooks`.
 */
import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import { managementCredential } from "../auth/credentials";
import { resourceStub } from "../stubs";
import { lifecycleEvents } from "../delivery/events";
import { delivery, deliveryPage } from "../delivery/schemas";
import { errorResponses, jsonResponse } from "../openapi/responses";
import { MANAGED } from "../openapi/security";
import { allKinds, KIND_NAMES } from "./kinds";
import { documentLater } from "../openapi/deferred";
import { resourceAnswer } from "./record";
import { pageLimit, resourceIdParam, seqCursor } from "../openapi/schemas";

const listQuery = z.object({ limit: pageLimit(), cursor: seqCursor });

/** Every kind's log is at `/v1/{kind}/{id}/deliveries`: one route, documented once, for all of them. */
const kindParam = z.object({
  kind: z
    .enum(KIND_NAMES as [string, ...string[]])
    .openapi({ param: { name: "kind", in: "path" }, example: "wakeups" })
    .describe("The resource's kind."),
});
const logParams = kindParam.extend(resourceIdParam.shape);
const retryParams = logParams.extend({
  delivery_id: z
    .string()
    .regex(/^evt_[0-9a-f]{32}$/)
    .openapi({ param: { name: "delivery_id", in: "path" }, example: "evt_8d1f0c6a2b3e4f5a6b7c8d9e0f1a2b3c" }),
});

const envelope = (type: string, data: z.ZodType) =>
  z.object({ type: z.literal(type), id: z.string(), resource_id: z.string(), created_at: z.string(), data });

export function registerDeliveryRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/{kind}/{id}/deliveries",
      tags: ["Manage"],
      operationId: "list_deliveries",
      security: MANAGED,
      summary: "Outbound calls and events of a resource, each with every delivery attempt (free)",
      request: { params: logParams, query: listQuery },
      responses: { 200: jsonResponse("Oldest first.", deliveryPage), ...errorResponses([401, 403, 404, 410, 422]) },
    }),
    async (c) => {
      const { kind, id } = c.req.valid("param");
      const { limit, cursor } = c.req.valid("query");
      const cred = managementCredential(c, id);
      const page = await resourceAnswer(
        c,
        id,
        cred.tokenHash,
        await resourceStub(c.env, id).listDeliveries({ mgmtHash: cred.tokenHash, kind, limit, cursor: cursor ?? null }),
      );
      return c.json(page as object, 200);
    },
  );
  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/{kind}/{id}/deliveries/{delivery_id}/retry",
      tags: ["Manage"],
      operationId: "retry_delivery",
      security: MANAGED,
      summary: "Send a delivery again now (free)",
      request: { params: retryParams },
      responses: {
        200: jsonResponse("The delivery, pending again.", delivery),
        ...errorResponses([401, 403, 404, 410, 422]),
      },
    }),
    async (c) => {
      const { kind, id, delivery_id } = c.req.valid("param");
      const cred = managementCredential(c, id);
      const out = await resourceAnswer(
        c,
        id,
        cred.tokenHash,
        await resourceStub(c.env, id).retryDelivery({ mgmtHash: cred.tokenHash, kind, deliveryId: delivery_id }),
      );
      return c.json(out as object, 200);
    },
  );
  const webhook = (type: string, description: string | undefined, schema: z.ZodType, registry = app.openAPIRegistry) =>
    registry.registerWebhook({
      method: "post",
      path: type,
      operationId: `event_${type.replace(/\W/g, "_")}`,
      summary: type,
      description,
      // Receivers authenticate us by the Standard Webhooks signature, not by an API credential.
      security: [],
      request: { body: { content: { "application/json": { schema } } } },
      responses: {
        200: { description: "Any 2xx acknowledges the event; `webhook-delivery: abort` stops the retries." },
      },
    });
  for (const [type, data] of Object.entries(lifecycleEvents))
    webhook(type, `To notify_url. ${data.description ?? ""}`, envelope(type, data));
  // The kinds' own requests, once every kind is loaded (openapi/deferred.ts).
  documentLater(app, (registry) => {
    for (const kind of allKinds()) {
      for (const [type, what] of Object.entries(kind.sends ?? {})) {
        webhook(type, `${what} Signed with the resource's signing_secret (Standard Webhooks).`, z.unknown(), registry);
      }
    }
  });
}
