/**
 * The public address router (API.md §12): `/p/{public_id}` and the paths below it,
 * for kinds with a public face (a dead-man switch's pings, a debouncer's events).
 * No credentials and no charge: the resource's owner pays for its life, and callers
 * are held to the per-address rate limit. One D1 read finds the resource and
 * whether the operator disabled the address; the resource's Durable Object answers.
 */
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../env";
import type { PublicAnswer, PublicRequest } from "./kind";
import { KINDS } from "./registry";
import { AppError, unwrap } from "../http/errors";
import { findPublicAddress } from "./index-table";
import { resourceStub } from "../stubs";
import { PUBLIC_ID_PATTERN } from "../ask/schema";
import { errorResponses } from "../openapi/responses";
import { serveObject } from "./downloads";

/** Bodies sent to public addresses are small events; more is refused with 413. */
export const PUBLIC_BODY_LIMIT = 64 * 1024;
const METHODS = ["GET", "HEAD", "POST", "PUT"];

async function requestOf(c: Context<AppEnv>, publicId: string): Promise<PublicRequest> {
  const url = new URL(c.req.url);
  const path = url.pathname.slice(url.pathname.indexOf(publicId) + publicId.length).replace(/\/+$/, "");
  const hasBody = c.req.method === "POST" || c.req.method === "PUT";
  const body = hasBody ? await c.req.text() : "";
  return {
    method: c.req.method,
    path,
    query: Object.fromEntries(url.searchParams),
    contentType: c.req.header("content-type") ?? null,
    body: body === "" ? null : body,
  };
}

async function servePublic(c: Context<AppEnv>): Promise<Response> {
  const publicId = c.req.param("public_id") ?? "";
  const gone = () => new AppError("not_found", "Nothing is served at this address.");
  if (!PUBLIC_ID_PATTERN.test(publicId)) throw gone();
  const target = await findPublicAddress(c.env.DB, publicId);
  if (!target || target.disabled) throw gone();
  if (target.state === "expired") throw new AppError("resource_expired", "The resource behind this address has expired.");
  if (target.state === "cancelled") throw new AppError("resource_cancelled", "The resource behind this address was cancelled.");
  const answer: PublicAnswer = unwrap(await resourceStub(c.env, target.id).publicRequest({ publicId, request: await requestOf(c, publicId) }));
  c.header("Cache-Control", "no-store");
  for (const [name, value] of Object.entries(answer.headers ?? {})) c.header(name, value);
  const status = answer.status as 200;
  if (answer.objectKey) return serveObject(c, answer.objectKey, Object.fromEntries(c.res.headers));
  if (c.req.method === "HEAD") return c.body(null, status);
  return typeof answer.body === "string" ? c.text(answer.body, status) : c.json(answer.body as object, status);
}

/** Documents the addresses once, listing what each kind serves there (the paths are shared by all kinds). */
function documentPublicPaths(app: OpenAPIHono<AppEnv>): void {
  const faces = KINDS.filter((k) => k.public).map((k) => {
    const lines = k.public!.paths.map((p) => `  - \`${p.methods.map((m) => m.toUpperCase()).join("/")} /p/{public_id}${p.path}\`: ${p.summary}`);
    return `- **${k.kind}**\n${lines.join("\n")}`;
  });
  const description = [
    "A resource's public face, at `urls.public` of its record. No credentials, free, rate limited per client address; bodies up to 64 KiB. A disabled or unknown address answers 404, an ended resource 410.",
    ...faces,
  ].join("\n\n");
  const params = z.object({ public_id: z.string().regex(PUBLIC_ID_PATTERN).openapi({ param: { name: "public_id", in: "path" }, example: "4k2R8h1Zq0Wm3n5T7v9x1y" }) });
  const below = { path: z.string().openapi({ param: { name: "path", in: "path" }, example: "start" }) };
  for (const [path, extra] of [["/p/{public_id}", {}], ["/p/{public_id}/{path}", below]] as const) {
    for (const method of ["get", "post"] as const) {
      app.openAPIRegistry.registerPath({
        method, path, tags: ["Public addresses"], operationId: `public_${method}${path.includes("{path}") ? "_path" : ""}`, security: [],
        summary: "A resource's public address", description,
        request: { params: params.extend(extra) },
        responses: { 200: { description: "What the kind answers (JSON or text)." }, ...errorResponses([404, 410, 413, 429]) },
      });
    }
  }
}

export function registerPublicRoutes(app: OpenAPIHono<AppEnv>): void {
  documentPublicPaths(app);
  app.on(METHODS, ["/p/:public_id", "/p/:public_id/*"], servePublic);
}
