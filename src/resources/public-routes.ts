/**
 * The public address router (docs/api.md#public-addresses): `/p/{public_id}` and the paths below it, for
 * kinds with a public face (kind/public-face.ts). No credentials and no charge: the
 * resource's owner pays for its life, and callers are held to the per-address rate limit.
 *
 * The public id names the kind and the resource's object (resources/public-addresses.ts),
 * so the kind's route table answers 404, 405 and 413 here, before any object is woken, and
 * a request that fits goes straight to its object: no D1 read on the hot path. Only an
 * object that holds nothing sends us to D1, to tell an ended resource (410) from none (404).
 */
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context, Hono } from "hono";
import type { AppEnv } from "../env";
import { allKinds, isKindName, loadKind } from "./kinds";
import { documentLater } from "../openapi/deferred";
import { AppError, unwrap, type Result } from "../http/errors";
import { runtimeDied } from "../rpc/resource-faults";
import { findPublicAddress, findResourceIndex } from "../kind/index-table";
import { resourceStub, type ResourceApi } from "../stubs";
import { parsePublicId, PUBLIC_ID_PATTERN } from "./public-addresses";
import { errorResponses } from "../openapi/responses";
import { digestHex } from "../bytes";
import { readCapped } from "../delivery/fetch-guarded";
import {
  DEFAULT_PUBLIC_BODY_BYTES,
  INLINE_PUBLIC_BODY_BYTES,
  MAX_PUBLIC_BODY_BYTES,
  PUBLIC_METHODS,
  type AnyPublicFace,
  type PublicAnswer,
  type PublicRequest,
  type PublicRoute,
} from "../kind/public-face";
import { endToEnd } from "../kind/public-request";
import { matchRoute, methodsOf } from "./public-route-match";
import { publicResponse, type Settled } from "../kind/public-answer";
import { forgetAddress, learnAnswer, reusedAnswer, reuseKey } from "./public-reuse";

const gone = () => new AppError("not_found", "Nothing is served at this address.");

function endedError(state: "expired" | "cancelled"): AppError {
  return state === "expired"
    ? new AppError("resource_expired", "The resource behind this address has expired.")
    : new AppError("resource_cancelled", "The resource behind this address was cancelled.");
}

/** The kind and object an id names: from the id itself, or (ids of the first layout) from D1. */
async function resolve(c: Context<AppEnv>, publicId: string): Promise<{ kind: string; resourceId: string } | null> {
  const parsed = parsePublicId(publicId);
  if (parsed) return parsed;
  const row = await findPublicAddress(c.env.DB, publicId);
  if (!row || row.disabled) return null;
  if (row.state !== "active") throw endedError(row.state);
  return { kind: row.kind, resourceId: row.id };
}

/** The address a request is for, and the object behind it. */
interface Address {
  publicId: string;
  resourceId: string;
  stub: ResourceApi;
}

/**
 * The body, read up to the route's limit: beyond it 413, and nothing of it goes anywhere. One
 * larger than INLINE_PUBLIC_BODY_BYTES is stored in R2 below the resource's prefix first.
 */
async function bodyOf(
  c: Context<AppEnv>,
  route: PublicRoute,
  address: Address,
  read: boolean,
): Promise<PublicRequest["body"]> {
  const limit = Math.min(route.maxBodyBytes ?? DEFAULT_PUBLIC_BODY_BYTES, MAX_PUBLIC_BODY_BYTES);
  const tooLarge = () =>
    new AppError("payload_too_large", `This address takes bodies of at most ${limit} bytes here.`, {
      extra: { max_body_bytes: limit },
    });
  const declared = Number(c.req.header("content-length") ?? NaN);
  if (declared > limit) throw tooLarge();
  // A streamed body goes on to an upstream as it comes (public-answer.ts caps it there), unless the kind asks for it.
  if (!read) return null;
  const { bytes: body, truncated } = await readCapped(c.req.raw.body, limit);
  if (truncated) throw tooLarge();
  const size = body.length;
  if (size === 0) return null;
  if (size <= INLINE_PUBLIC_BODY_BYTES) return body;
  const key = `${address.resourceId}/public-bodies/${crypto.randomUUID()}`;
  const sha256 = await digestHex(body);
  // The object hears of the key first, so bytes no request commits (this worker dies next) are deleted by its alarm.
  await answerOf(c, address, await address.stub.intendPublicBody({ publicId: address.publicId, key }));
  // R2 checks the digest as it stores: what the object is told is what R2 holds.
  await c.env.BUCKET.put(key, body, { sha256 });
  return { key, size, sha256 };
}

/** What the object answered; when it holds nothing, an ended resource is 410 (its D1 tombstone says so), else 404. */
async function answerOf<T>(c: Context<AppEnv>, address: Address, result: Result<T>): Promise<T> {
  if (!result.ok && result.error.resourceMissing) {
    const row = await findResourceIndex(c.env.DB, address.resourceId);
    if (row && row.state !== "active" && row.public_id === address.publicId) throw endedError(row.state);
  }
  return unwrap(result);
}

async function servePublic(c: Context<AppEnv>): Promise<Response> {
  const publicId = c.req.param("public_id") ?? "";
  if (!PUBLIC_ID_PATTERN.test(publicId)) throw gone();
  const target = await resolve(c, publicId);
  const face = target && isKindName(target.kind) ? (await loadKind(target.kind)).public : undefined;
  if (!target || !face) throw gone();
  try {
    return await answer(c, publicId, target.resourceId, face);
  } catch (err) {
    const shown = err instanceof AppError && errorPage(c, face, err);
    if (shown) return publicResponse(c, shown);
    throw err;
  }
}

/**
 * A face people open in a browser shows its own page for an error (an address used up, a refusal), thrown or answered.
 */
function errorPage(c: Context<AppEnv>, face: AnyPublicFace, error: AppError): PublicAnswer | null {
  return (
    face.errorAnswer?.(
      { method: c.req.method, headers: endToEnd(c.req.raw.headers) },
      { status: error.status, detail: error.detail },
    ) ?? null
  );
}

async function answer(
  c: Context<AppEnv>,
  publicId: string,
  resourceId: string,
  face: AnyPublicFace,
): Promise<Response> {
  // The exact sub-path, as sent: percent-encoding and a trailing slash kept (the runtime has normalised the URL
  // already).
  const url = c.req.url;
  const start = url.indexOf(`/p/${publicId}`, url.indexOf("//") + 2) + 3 + publicId.length;
  const queryAt = url.indexOf("?", start);
  const path = url.slice(start, queryAt === -1 ? undefined : queryAt);
  const search = queryAt === -1 ? "" : url.slice(queryAt);
  const match = matchRoute(face.routes, c.req.method, path);
  if ("error" in match) {
    if (match.error === "not_found") throw new AppError("not_found", "This address serves nothing at that path.");
    throw new AppError("method_not_allowed", `${c.req.method} is not answered here.`, {
      headers: { Allow: match.allow.join(", ") },
    });
  }
  const reuse = reuseKey(match.route, c.req.method, path, search, c.req.raw.headers);
  const reused = reuse !== null ? reusedAnswer(publicId, reuse, Date.now()) : null;
  if (reused) {
    // The bytes of a version since retired are gone: then the object answers after all.
    try {
      return await respond(c, face, reused, match.route);
    } catch (err) {
      if (!(err instanceof AppError && err.code === "not_found")) throw err;
      forgetAddress(publicId);
    }
  }
  const streams = match.route.streamsBody ?? false;
  const stub = resourceStub(c.env, resourceId);
  const address = { publicId, resourceId, stub };
  const request: PublicRequest = {
    method: c.req.method,
    route: match.route.name,
    params: match.params,
    path,
    query: [...new URLSearchParams(search)],
    rawQuery: search.slice(1),
    headers: endToEnd(c.req.raw.headers),
    clientIp: c.req.header("cf-connecting-ip") ?? null,
    receivedAt: Date.now(),
    body: await bodyOf(c, match.route, address, !streams),
    bodyUnread: streams,
  };
  let result = await stub.publicRequest({ publicId, request });
  if (result.ok && result.value.type === "read_body" && request.bodyUnread) {
    // The kind keeps this one (a stable address with no target yet): read it after all, once.
    Object.assign(request, { body: await bodyOf(c, match.route, address, true), bodyUnread: false });
    result = await stub.publicRequest({ publicId, request });
  }
  // A stored body is the kind's once its work committed; a request that failed leaves nothing behind (and a worker
  // that dies first leaves it to the object's alarm, `intendPublicBody` above).
  const body = request.body;
  if (!result.ok && body && !(body instanceof Uint8Array) && !runtimeDied(c.env, result.error))
    await c.env.BUCKET.delete(body.key);
  learnAnswer(publicId, resourceId, reuse, result.ok ? result.value : null, Date.now());
  const answered = await answerOf(c, address, result);
  const report = answered.type === "upstream" ? answered.report : undefined;
  // The face hears how its upstream answered (a request log), after the answer has gone out.
  const settled = report
    ? (outcome: { status: number; durationMs: number }) =>
        c.executionCtx.waitUntil(
          stub
            .publicSettled({ publicId, report, ...outcome })
            .catch((err: unknown) => console.error(`${publicId}: upstream outcome not recorded`, err)),
        )
    : undefined;
  return respond(c, face, answered, match.route, settled);
}

async function respond(
  c: Context<AppEnv>,
  face: AnyPublicFace,
  answered: PublicAnswer,
  route: PublicRoute,
  settled?: Settled,
): Promise<Response> {
  if (answered.delayMs) await new Promise((resolve) => setTimeout(resolve, answered.delayMs));
  const shown = answered.type === "problem" && errorPage(c, face, new AppError(answered.code, answered.detail));
  return publicResponse(c, shown || answered, route, settled);
}

/**
 * Documents the addresses once, listing what each kind serves there (the paths are shared by all kinds),
 * when the document is first built (every kind loaded then).
 */
export function documentPublicPaths(app: OpenAPIHono<AppEnv>): void {
  documentLater(app, (registry) => documentFaces(registry));
}

function documentFaces(registry: OpenAPIHono<AppEnv>["openAPIRegistry"]): void {
  const kinds = allKinds();
  const faces = kinds
    .filter((k) => k.public)
    .map((k) => {
      const lines = k.public!.routes.map((r) => {
        const limit = r.maxBodyBytes ?? DEFAULT_PUBLIC_BODY_BYTES;
        const body = r.methods.some((m) => m !== "GET" && m !== "HEAD" && m !== "OPTIONS")
          ? ` (bodies up to ${limit} bytes)`
          : "";
        const any = r.anyMethod ? " (and any other method: WebDAV's PROPFIND, MKCOL …)" : "";
        return `  - \`${methodsOf(r).join("/")} /p/{public_id}${r.path}\`${any}: ${r.summary}${body}`;
      });
      return `- **${k.kind}** (ids begin \`${k.kind}_\`)\n${lines.join("\n")}`;
    });
  const description = [
    "A resource's public face, at `urls.public` of its record. No credentials, free, rate limited per " +
      "client address and per address (all its callers together). What each kind answers, and with which " +
      "methods and body limits, is below; another path answers 404, another method 405 with `Allow`, a " +
      "larger body 413. A disabled or unknown address answers 404, an ended resource 410. HTML pages come " +
      "with a strict Content-Security-Policy, `X-Frame-Options: DENY` and `X-Content-Type-Options: nosniff`.",
    ...faces,
  ].join("\n\n");
  const params = z.object({
    public_id: z
      .string()
      .regex(PUBLIC_ID_PATTERN)
      .openapi({
        param: { name: "public_id", in: "path" },
        example: "secrets_1HqF0mJ7yXcT3kR9sV2bN8pL4wZ6dG5aE0uC1iO7tYr",
      }),
  });
  const below = { path: z.string().openapi({ param: { name: "path", in: "path" }, example: "start" }) };
  const used = new Set(kinds.flatMap((k) => k.public?.routes.flatMap((r) => methodsOf(r)) ?? []));
  for (const [path, extra] of [
    ["/p/{public_id}", {}],
    ["/p/{public_id}/{path}", below],
  ] as const) {
    for (const method of PUBLIC_METHODS.filter((m) => used.has(m))) {
      const lower = method.toLowerCase() as "get";
      // The list of what each kind serves is written out once, on the first operation; the others point to it.
      const first = method === "GET" && path === "/p/{public_id}";
      registry.registerPath({
        method: lower,
        path,
        tags: ["Public addresses"],
        operationId: `public_${lower}${path.includes("{path}") ? "_path" : ""}`,
        security: [],
        ...(first
          ? { summary: "A resource's public address", description }
          : { summary: "A resource's public address (what each kind serves: see public_get)" }),
        request: { params: params.extend(extra) },
        responses: {
          200: {
            description: "What the kind answers: JSON, text, HTML, bytes, a redirect, or a proxied upstream's answer.",
          },
          ...errorResponses([404, 405, 410, 413, 429]),
        },
      });
    }
  }
}

/**
 * Every method reaches the router, not only PUBLIC_METHODS: a face's route table decides, so a
 * bin captures PROPFIND and any other face answers it 405 with `Allow` (never the app's 404).
 */
export function registerPublicRoutes(app: Hono<AppEnv>): void {
  for (const path of ["/p/:public_id", "/p/:public_id/*"]) app.all(path, servePublic);
}
