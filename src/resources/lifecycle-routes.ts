/**
 * Manage: status, extend, export and cancel of any resource, with its management token
 * (docs/api.md#managing-a-resource).
 */
import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { managementCredential } from "../auth/credentials";
import { resourceStub } from "../stubs";
import { runPaid } from "../money/payment";
import { lifetimePriceMicro } from "../money/prices";
import { loadKind } from "./kinds";
import { publicRecord, resourceAnswer } from "./record";
import { resourceIdParam, resourceRecord } from "../openapi/schemas";
import { errorResponses, jsonResponse } from "../openapi/responses";
import { MANAGED, MANAGED_PAID } from "../openapi/security";

const MANAGE = { tags: ["Manage"], security: MANAGED };
const GONE = [401, 403, 404, 410];

const extendBody = z
  .object({
    ttl_seconds: z
      .int()
      .min(60)
      .describe("Seconds to add to expires_at; charged at the kind's day rate per started day."),
  })
  .strict()
  .openapi("ExtendRequest");

const exportBody = z
  .object({
    resource: resourceRecord,
    data: z.unknown().describe("Everything the resource holds, in the kind's own shape."),
  })
  .openapi("ResourceExport");

async function target(c: Context<AppEnv>) {
  const { id } = resourceIdParam.parse(c.req.param());
  const cred = managementCredential(c, id);
  return { id, hash: cred.tokenHash, stub: resourceStub(c.env, id) };
}

export function registerLifecycleRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/resources/{id}",
      operationId: "get_resource",
      summary: "Status of a resource (free)",
      ...MANAGE,
      request: { params: resourceIdParam },
      responses: { 200: jsonResponse("The resource record.", resourceRecord), ...errorResponses(GONE) },
    }),
    async (c) => {
      const t = await target(c);
      return c.json(publicRecord(c, await resourceAnswer(c, t.id, t.hash, await t.stub.status(t.hash))), 200);
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/resources/{id}/extend",
      operationId: "extend_resource",
      summary: "Extend the TTL by paying again",
      ...MANAGE,
      description:
        "Pay with `X-CREDIT-TOKEN` beside the management token, or with x402. Refused with 422 past the " +
        "kind's maximum lifetime.",
      security: MANAGED_PAID,
      request: {
        params: resourceIdParam,
        body: {
          required: true,
          content: { "application/json": { schema: extendBody, example: { ttl_seconds: 86400 } } },
        },
      },
      responses: {
        200: jsonResponse("The record with its new expires_at.", resourceRecord),
        ...errorResponses([...GONE, 402, 422]),
      },
    }),
    async (c) => {
      const t = await target(c);
      const { ttl_seconds } = c.req.valid("json");
      // The price depends on the kind, which only the resource knows: one free status read first.
      const current = await resourceAnswer(c, t.id, t.hash, await t.stub.status(t.hash));
      const kind = await loadKind(current.kind);
      const priceMicro = lifetimePriceMicro(kind, ttl_seconds);
      const core = await runPaid(
        c,
        {
          priceMicro,
          operation: `${kind.kind}.extend`,
          description: `Extend ${t.id} by ${ttl_seconds} s`,
          creditFrom: "x-credit-token",
        },
        {
          run: async (payer) =>
            resourceAnswer(
              c,
              t.id,
              t.hash,
              await t.stub.extend({
                mgmtHash: t.hash,
                ttlSeconds: ttl_seconds,
                priceMicro,
                payer,
                requestId: c.get("requestId"),
              }),
            ),
        },
      );
      return c.json(publicRecord(c, core), 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/resources/{id}/export",
      operationId: "export_resource",
      summary: "Export everything the resource holds (free)",
      ...MANAGE,
      request: { params: resourceIdParam },
      responses: { 200: jsonResponse("The record and all its data.", exportBody), ...errorResponses(GONE) },
    }),
    async (c) => {
      const t = await target(c);
      const out = await resourceAnswer(c, t.id, t.hash, await t.stub.exportAll(t.hash));
      return c.json({ resource: publicRecord(c, out.resource), data: out.data }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "delete",
      path: "/v1/resources/{id}",
      operationId: "cancel_resource",
      summary: "Cancel: end the resource now and delete its data (free)",
      ...MANAGE,
      request: { params: resourceIdParam },
      responses: { 200: jsonResponse("The record with state `cancelled`.", resourceRecord), ...errorResponses(GONE) },
    }),
    async (c) => {
      const t = await target(c);
      return c.json(publicRecord(c, await resourceAnswer(c, t.id, t.hash, await t.stub.cancel(t.hash))), 200);
    },
  );
}
