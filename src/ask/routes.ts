/** Ask (seed-spec §4): free feature requests and abuse reports, no credential needed. */
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { AppError } from "../http/errors";
import { clientIp } from "../http/client-ip";
import { serviceUrls } from "../http/urls";
import { errorResponses, jsonResponse } from "../openapi/responses";
import { PUBLIC_ID_PATTERN, publicBaseUrl, publicIdOf } from "../resources/public-addresses";
import { abuseReportBody, featureRequestBody, received } from "./schema";
import { recordAbuseReport, recordFeatureRequest, type SubmissionMeta } from "./store";

const ASK = { tags: ["Ask"], security: [] };

function meta(c: Context<AppEnv>): SubmissionMeta {
  // The address as the rate limits count it (an IPv6 /64 is one client); "unknown" outside Cloudflare's edge.
  const ip = clientIp(c);
  return { ip: ip === "unknown" ? null : ip, requestId: c.get("requestId"), now: Date.now() };
}

const isBelow = (url: URL, base: string) => {
  const b = new URL(base);
  const path = b.pathname.replace(/\/+$/, "");
  return url.origin === b.origin && (url.pathname === path || url.pathname.startsWith(`${path}/`));
};

/** The reported URL must be one this service serves; userinfo is dropped so no credential in it is kept. */
function reportedUrl(c: Context<AppEnv>, raw: string): { url: string; publicId: string | null } {
  const url = new URL(raw);
  const publicBase = publicBaseUrl(c);
  if (!isBelow(url, publicBase) && !isBelow(url, serviceUrls(c).baseUrl)) {
    const message = `must be an address of this service, e.g. ${publicBase}/p/{public_id}`;
    throw new AppError("validation_failed", `url: ${message}.`, { errors: [{ path: "url", message }] });
  }
  url.username = "";
  url.password = "";
  return { url: url.href, publicId: publicIdOf(url, publicBase, PUBLIC_ID_PATTERN) };
}

export function registerAskRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/feature-requests",
      operationId: "request_feature",
      ...ASK,
      summary: "Tell the operator what is missing (free, no credential)",
      description:
        "Stored for the operator to read. Anonymous is fine: `contact` is optional, credentials pasted " +
        "into the text are redacted, and the client IP is kept only as a salted hash.",
      request: {
        body: {
          required: true,
          content: {
            "application/json": {
              schema: featureRequestBody,
              example: {
                title: "Vault values larger than 25 MiB",
                body: "I keep model checkpoints of about 40 MiB between runs.",
                kind: "vaults",
              },
            },
          },
        },
      },
      responses: { 201: jsonResponse("Received.", received), ...errorResponses([413, 415, 422]) },
    }),
    async (c) => c.json(await recordFeatureRequest(c.env.DB, c.req.valid("json"), meta(c)), 201),
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/abuse-reports",
      operationId: "report_abuse",
      ...ASK,
      summary: "Report abusive content at a public address of this service (free, no credential)",
      description:
        "`url` must be an address this service serves, normally `{PUBLIC_BASE_URL}/p/{public_id}`; the " +
        "operator reviews the report and can disable that address.",
      request: {
        body: {
          required: true,
          content: {
            "application/json": {
              schema: abuseReportBody,
              example: {
                url: "https://api.zeitvault.example/p/4k2R8h1Zq0Wm3n5T7v9x1y",
                reason: "phishing",
                details: "The page imitates the login form of a bank.",
              },
            },
          },
        },
      },
      responses: { 201: jsonResponse("Received.", received), ...errorResponses([413, 415, 422]) },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const { url, publicId } = reportedUrl(c, body.url);
      return c.json(await recordAbuseReport(c.env.DB, { ...body, url, publicId }, meta(c)), 201);
    },
  );
}
