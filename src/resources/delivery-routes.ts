/**
 * The attempt log of every resource's outbound events (`GET /v1/{kind}/{id}/deliveries`)
 * with a manual retry, and the event types in the OpenAPI document's `webhooks`.
 */
import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import { managementCredential } from "../auth/credentials";
import { resourceStub } from "../stubs";
import { lifecycleEvents } from "../delivery/events";
import { errorResponses, jsonResponse } from "../openapi/responses";
import { MANAGED } from "../openapi/security";
import { TAGS } from "../openapi/tags";
import { KINDS } from "./registry";
import { resourceAnswer } from "./record";
import { pageLimit, resourceIdParam, seqCursor } from "../openapi/schemas";

const attempt = z.object({
  number: z.int(), at: z.string(), outcome: z.enum(["delivered", "failed", "aborted"]),
  status_code: z.int().nullable(), error: z.string().nullable(), duration_ms: z.int(), response_excerpt: z.string().nullable(),
});

const delivery = z
  .object({
    id: z.string().describe("The event id, also sent as `webhook-id`."),
    event_type: z.string(),
    url: z.string(),
    method: z.string(),
    status: z.enum(["pending", "retrying", "delivered", "aborted", "dead"]),
    attempts: z.int(),
    created_at: z.string(),
    updated_at: z.string(),
    body: z.string().nullable().describe("What was sent: for lifecycle events, the event's JSON; null when withheld."),
    body_withheld: z.boolean().describe("The body is a secret (a dead-man switch's released payload): kept sealed, never shown."),
    attempt_log: z.array(attempt),
  })
  .openapi("Delivery");

const listQuery = z.object({ limit: pageLimit(), cursor: seqCursor });

const retryParams = resourceIdParam.extend({ delivery_id: z.string().regex(/^evt_[0-9a-f]{32}$/).openapi({ param: { name: "delivery_id", in: "path" } }) });

const envelope = (type: string, data: z.ZodType) =>
  z.object({ type: z.literal(type), id: z.string(), resource_id: z.string(), created_at: z.string(), data });

export function registerDeliveryRoutes(app: OpenAPIHono<AppEnv>): void {
  for (const kind of KINDS) {
    const tags = [TAGS[kind.family]];
    const slug = kind.kind.replace(/-/g, "_");
    app.openapi(
      createRoute({
        method: "get", path: `/v1/${kind.kind}/{id}/deliveries`, tags, operationId: `${slug}_deliveries`, security: MANAGED,
        summary: "Outbound events of this resource and every delivery attempt (free)",
        request: { params: resourceIdParam, query: listQuery },
        responses: { 200: jsonResponse("Oldest first.", z.object({ items: z.array(delivery), next_cursor: z.string().nullable() })), ...errorResponses([401, 403, 404, 410, 422]) },
      }),
      async (c) => {
        const { id } = c.req.valid("param");
        const { limit, cursor } = c.req.valid("query");
        const cred = managementCredential(c, id);
        const page = await resourceAnswer(c, id, cred.tokenHash, await resourceStub(c.env, id).listDeliveries({ mgmtHash: cred.tokenHash, limit, cursor: cursor ?? null }));
        return c.json(page as object, 200);
      },
    );
    app.openapi(
      createRoute({
        method: "post", path: `/v1/${kind.kind}/{id}/deliveries/{delivery_id}/retry`, tags, operationId: `${slug}_retry_delivery`, security: MANAGED,
        summary: "Send a delivery again now (free)",
        request: { params: retryParams },
        responses: { 200: jsonResponse("The delivery, pending again.", delivery), ...errorResponses([401, 403, 404, 410, 422]) },
      }),
      async (c) => {
        const { id, delivery_id } = c.req.valid("param");
        const cred = managementCredential(c, id);
        const out = await resourceAnswer(c, id, cred.tokenHash, await resourceStub(c.env, id).retryDelivery({ mgmtHash: cred.tokenHash, deliveryId: delivery_id }));
        return c.json(out as object, 200);
      },
    );
  }
  const webhook = (type: string, description: string | undefined, schema: z.ZodType) =>
    app.openAPIRegistry.registerWebhook({
      method: "post", path: type, operationId: `event_${type.replace(/\W/g, "_")}`, summary: type, description,
      // Receivers authenticate us by the Standard Webhooks signature, not by an API credential.
      security: [],
      request: { body: { content: { "application/json": { schema } } } },
      responses: { 200: { description: "Any 2xx acknowledges the event; `webhook-delivery: abort` stops the retries." } },
    });
  for (const [type, data] of Object.entries(lifecycleEvents)) webhook(type, `To notify_url. ${data.description ?? ""}`, envelope(type, data));
  for (const kind of KINDS) {
    for (const [type, what] of Object.entries(kind.sends ?? {})) {
      webhook(type, `${what} Signed with the resource's signing_secret (Standard Webhooks). A configured call (a wakeup's, a schedule's tick) carries the method, headers and body its creator set; an event carries the envelope { type, id, resource_id, created_at, data }.`, z.unknown());
    }
  }
}
