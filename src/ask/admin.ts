/**
 * Operator endpoints under /v1/admin, behind the ADMIN_TOKEN secret. Without the
 * secret they do not exist (404, like any unknown path), so a deployment that
 * never set one exposes nothing to probe.
 */
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { AppError } from "../http/errors";
import { operatorToken } from "../operator/operator-token";
import { digestsEqual } from "../auth/ids";
import { sha256Hex } from "../bytes";
import { parseCreditToken, parseManagementToken } from "../auth/tokens";
import { errorResponses, jsonResponse } from "../openapi/responses";
import {
  abuseReportPage,
  disableBody,
  featureRequestPage,
  listQuery,
  publicAddressState,
  publicIdParam,
} from "./schema";
import { listAbuseReports, listFeatureRequests } from "./store";
import {
  disablePublicAddress,
  enablePublicAddress,
  findDisabledPublicAddress,
  mirrorDisabled,
  publicBaseUrl,
  type PublicAddressRow,
} from "../resources/public-addresses";

export const ADMIN = { tags: ["Ask"], security: [{ admin: [] }] };
export const ADMIN_ERRORS = [401, 403, 404, 422];
// Not the OAuth metadata pointer the other 401s carry: no access token can ever be an operator token.
const CHALLENGE = 'Bearer realm="operator"';

/**
 * The operator token, as a bearer or (reads only, from the operator page's browser) as HTTP Basic's password
 * (operator/operator-token.ts); `challenge` is what a 401 asks for: Bearer here, Basic on the page.
 */
export const operatorGuard = (challenge: string) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const expected = c.env.ADMIN_TOKEN;
    if (!expected) throw new AppError("not_found", `No route for ${c.req.method} ${new URL(c.req.url).pathname}.`);
    const token = operatorToken(c, challenge);
    if (!token)
      throw new AppError("unauthorized", "Send the operator token as `Authorization: Bearer …`.", {
        headers: { "WWW-Authenticate": challenge },
      });
    // Hash both sides first so the comparison is constant-time whatever the lengths.
    if (!digestsEqual(sha256Hex(token), sha256Hex(expected))) {
      if (parseCreditToken(token) || parseManagementToken(token)) {
        throw new AppError("forbidden", "This is a customer credential; operator endpoints need the operator token.");
      }
      throw new AppError("unauthorized", "Unknown operator token.", {
        headers: {
          "WWW-Authenticate": challenge.startsWith("Bearer") ? `${challenge}, error="invalid_token"` : challenge,
        },
      });
    }
    await next();
    c.res.headers.set("Cache-Control", "no-store");
  });
const adminGuard = operatorGuard(CHALLENGE);

function stateBody(c: Context<AppEnv>, publicId: string, row: PublicAddressRow | null) {
  return {
    public_id: publicId,
    url: `${publicBaseUrl(c)}/p/${publicId}`,
    disabled: row !== null,
    reason: row?.reason ?? null,
    disabled_at: row ? new Date(row.disabled_at).toISOString() : null,
  };
}

export function registerAdminRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openAPIRegistry.registerComponent("securitySchemes", "admin", {
    type: "http",
    scheme: "bearer",
    description: "The operator token (the ADMIN_TOKEN secret). Without it configured, operator endpoints answer 404.",
  });
  app.use("/v1/admin/*", adminGuard);

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/admin/feature-requests",
      operationId: "admin_list_feature_requests",
      ...ADMIN,
      summary: "Operator: feature requests, newest first",
      request: { query: listQuery },
      responses: {
        200: jsonResponse("A page of feature requests.", featureRequestPage),
        ...errorResponses(ADMIN_ERRORS),
      },
    }),
    async (c) => {
      const { limit, cursor } = c.req.valid("query");
      return c.json(await listFeatureRequests(c.env.DB, limit, cursor), 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/admin/abuse-reports",
      operationId: "admin_list_abuse_reports",
      ...ADMIN,
      summary: "Operator: abuse reports, newest first",
      request: { query: listQuery },
      responses: { 200: jsonResponse("A page of abuse reports.", abuseReportPage), ...errorResponses(ADMIN_ERRORS) },
    }),
    async (c) => {
      const { limit, cursor } = c.req.valid("query");
      return c.json(await listAbuseReports(c.env.DB, limit, cursor), 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/admin/public-addresses/{public_id}",
      operationId: "admin_get_public_address",
      ...ADMIN,
      summary: "Operator: whether a public address is disabled",
      request: { params: publicIdParam },
      responses: { 200: jsonResponse("The address's state.", publicAddressState), ...errorResponses(ADMIN_ERRORS) },
    }),
    async (c) => {
      const { public_id } = c.req.valid("param");
      return c.json(stateBody(c, public_id, await findDisabledPublicAddress(c.env.DB, public_id)), 200);
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/admin/public-addresses/{public_id}/disable",
      operationId: "admin_disable_public_address",
      ...ADMIN,
      summary: "Operator: disable a public address",
      description:
        "From now on the address answers as if it did not exist. Idempotent: disabling again only updates " +
        "the reason. Works before the address exists too.",
      request: {
        params: publicIdParam,
        body: {
          required: true,
          content: {
            "application/json": {
              schema: disableBody,
              example: { reason: "Phishing page, reported twice and confirmed." },
            },
          },
        },
      },
      responses: {
        200: jsonResponse("The address's state.", publicAddressState),
        ...errorResponses([...ADMIN_ERRORS, 413, 415]),
      },
    }),
    async (c) => {
      const { public_id } = c.req.valid("param");
      const row = await disablePublicAddress(c.env.DB, public_id, c.req.valid("json").reason, Date.now());
      await mirrorDisabled(c.env, public_id, true);
      return c.json(stateBody(c, public_id, row), 200);
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/admin/public-addresses/{public_id}/enable",
      operationId: "admin_enable_public_address",
      ...ADMIN,
      summary: "Operator: enable a disabled public address again",
      description: "Idempotent: enabling an address that is not disabled changes nothing.",
      request: { params: publicIdParam },
      responses: { 200: jsonResponse("The address's state.", publicAddressState), ...errorResponses(ADMIN_ERRORS) },
    }),
    async (c) => {
      const { public_id } = c.req.valid("param");
      await enablePublicAddress(c.env.DB, public_id);
      await mirrorDisabled(c.env, public_id, false);
      return c.json(stateBody(c, public_id, null), 200);
    },
  );
}
