/**
 * Signed download links for R2 objects a resource holds (docs/api.md#managing-a-resource: export hands
 * out large bodies this way; kinds link their stored content). The link names the
 * object and carries an HMAC over it and its expiry, so no credential travels and
 * nothing is stored per link. Once the resource ends its R2 prefix is deleted, so
 * an unexpired link then answers 404.
 */
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { hmac } from "@noble/hashes/hmac";
import { sha256 } from "@noble/hashes/sha2";
import type { Context } from "hono";
import type { AppEnv, Env } from "../env";
import { subkey } from "../auth/subkeys";
import { toHex, utf8 } from "../bytes";
import { digestsEqual } from "../auth/ids";
import { AppError } from "../http/errors";
import { errorResponses } from "../openapi/responses";
import { isHeaderValue, isMediaType } from "../http/header-fields";

const PREFIX = "/v1/downloads/";
const keyCache = new Map<string, Uint8Array>();

function signature(env: Env, key: string, expires: number): string {
  const id = env.DATA_ENCRYPTION_KEY ?? "dev";
  let k = keyCache.get(id);
  if (!k) keyCache.set(id, (k = subkey(env, "download links")));
  return toHex(hmac(sha256, k, utf8(`${key}\n${expires}`)));
}

/** `{baseUrl}/v1/downloads/{key}?expires=…&sig=…`, valid until `expiresAt` (Unix ms; the link carries seconds). */
export function signedDownloadUrl(env: Env, baseUrl: string, key: string, expiresAt: number): string {
  const expires = Math.ceil(expiresAt / 1000);
  const path = key.split("/").map(encodeURIComponent).join("/");
  return `${baseUrl}${PREFIX}${path}?expires=${expires}&sig=${signature(env, key, expires)}`;
}

const query = z.object({
  expires: z.coerce
    .number()
    .int()
    .openapi({ example: 1795000000 })
    .describe("Unix seconds after which the link is refused."),
  sig: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .describe("HMAC of the object key and `expires`."),
});

/**
 * The Range header of an operation that serves stored bytes: read in its transaction, so an unsatisfiable one is
 * refused before it is charged.
 */
export const rangeHeader = z.object({
  range: z
    .string()
    .max(200)
    .optional()
    .describe("`bytes=a-b`, `bytes=a-` or `bytes=-n` (206); several ranges get the whole object (200)."),
});

/** Throws 416 (with `Content-Range: bytes *\/size`) for a range that selects none of `size` bytes. */
export function checkRange(range: string | undefined, size: number): void {
  const r = rangeOf(range);
  if (!r) return;
  if (("offset" in r && (r.offset ?? 0) >= size) || ("suffix" in r && r.suffix === 0)) {
    throw new AppError(
      "range_not_satisfiable",
      `The content has ${size} bytes; the range ${range} selects none of them.`,
      { headers: { "content-range": `bytes */${size}` } },
    );
  }
}

/** `Range: bytes=a-b` → R2's range; anything else (several ranges, junk) → the whole object, as RFC 9110 allows. */
function rangeOf(header: string | undefined): R2Range | undefined {
  const m = header && /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === "" && m[2] === "")) return undefined;
  if (m[1] === "") return { suffix: Number(m[2]) };
  const offset = Number(m[1]);
  return m[2] === "" ? { offset } : { offset, length: Number(m[2]) - offset + 1 };
}

/** An R2 object opened for serving: its body (null for HEAD) and the range it was read with. */
export interface OpenedObject {
  object: R2Object | R2ObjectBody;
  range: R2Range | undefined;
}

/**
 * Opens the R2 object `key` for this request (HEAD: its metadata only; `Range: bytes=a-b`: that
 * part). Throws 404 when it is gone and 416 for a range past its end, so a caller that opens
 * before it charges never charges for bytes it cannot send.
 */
export async function openObject(c: Context<AppEnv>, key: string): Promise<OpenedObject> {
  const range = rangeOf(c.req.header("range"));
  const object =
    c.req.method === "HEAD"
      ? await c.env.BUCKET.head(key)
      : await (range ? c.env.BUCKET.get(key, { range }) : c.env.BUCKET.get(key)).catch((err: unknown) => {
          // R2 refuses a range past the end; anything else is a real failure.
          if (range) throw new AppError("range_not_satisfiable", "The requested range is outside the object.");
          throw err;
        });
  if (!object) throw new AppError("not_found", "Nothing is stored here any more.");
  return { object, range };
}

/** Gives up an opened object that will not be sent. */
export async function closeObject(opened: OpenedObject): Promise<void> {
  if ("body" in opened.object) await (opened.object as R2ObjectBody).body.cancel().catch(() => undefined);
}

/**
 * Streams an opened object (never held whole), with its Content-Type, ETag and length; a range
 * answers 206. The one way stored bytes leave the service. Content-Type and Content-Disposition go
 * as stored when they can be sent: values stored before the create and upload checks existed (a
 * NUL in a type) must not make every download fail. `extra` replaces the defaults.
 */
export function objectResponse(
  { object, range }: OpenedObject,
  extra: Record<string, string> = {},
  status = 200,
): Response {
  const meta = object.httpMetadata;
  const type = meta?.contentType;
  // Bytes callers chose, served from our origin: never sniffed into something runnable, never given our origin's
  // powers.
  const fields: Record<string, string> = {
    etag: object.httpEtag,
    "accept-ranges": "bytes",
    "cache-control": "private, max-age=60",
    "x-content-type-options": "nosniff",
    "content-security-policy": "sandbox",
    "content-type": type && isMediaType(type) ? type : "application/octet-stream",
  };
  const disposition = meta?.contentDisposition;
  if (disposition && isHeaderValue(disposition)) fields["content-disposition"] = disposition;
  for (const name in extra) fields[name.toLowerCase()] = extra[name]!;
  const size = object.size;
  const body = "body" in object ? (object as R2ObjectBody).body : null;
  if (range && body && object.range) {
    // R2 echoes the range as asked: a suffix, or an offset with an optional length.
    const r = object.range as { offset?: number; length?: number; suffix?: number };
    const offset = r.suffix !== undefined ? Math.max(0, size - r.suffix) : (r.offset ?? 0);
    const length = r.suffix !== undefined ? size - offset : (r.length ?? size - offset);
    fields["content-range"] = `bytes ${offset}-${offset + length - 1}/${size}`;
    fields["content-length"] = String(length);
    return new Response(body, { status: 206, headers: fields });
  }
  fields["content-length"] = String(size);
  return new Response(body, { status, headers: fields });
}

/** `status`: of a whole object (a site's 404.html answers 404); a range is 206 whatever it is. */
export async function serveObject(
  c: Context<AppEnv>,
  key: string,
  extra: Record<string, string> = {},
  status = 200,
): Promise<Response> {
  return objectResponse(await openObject(c, key), extra, status);
}

export function registerDownloadRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openAPIRegistry.registerPath({
    method: "get",
    path: `${PREFIX}{key}`,
    tags: ["Manage"],
    operationId: "download",
    security: [],
    summary: "Download stored content by signed link (free)",
    description:
      "Links come from a resource (its export, a snapshot's or a fetch's `content_url`) and work without " +
      "credentials until the resource's expiry as of when the link was made. `Range: bytes=a-b` is " +
      "honoured (206). 404 once the resource has ended.",
    request: {
      params: z.object({
        key: z.string().openapi({
          param: { name: "key", in: "path" },
          example: "r_4k2R8h1Zq0Wm3n5T7v9x1y/blob/5f0c6a2b-3e4f-4a6b-8c8d-9e0f1a2b3c4d",
        }),
      }),
      query,
    },
    responses: {
      200: { description: "The bytes, with their Content-Type, ETag and Content-Length." },
      206: { description: "The requested range." },
      ...errorResponses([403, 404, 416]),
    },
  });
  app.on(["GET", "HEAD"], `${PREFIX}*`, async (c) => {
    const url = new URL(c.req.url);
    let key: string;
    try {
      key = url.pathname.slice(PREFIX.length).split("/").map(decodeURIComponent).join("/");
    } catch {
      throw new AppError("forbidden", "This download link is not valid."); // a malformed %-escape
    }
    const parsed = query.safeParse(Object.fromEntries(url.searchParams));
    if (!parsed.success || !digestsEqual(parsed.data.sig, signature(c.env, key, parsed.data.expires))) {
      throw new AppError("forbidden", "This download link is not valid.");
    }
    if (parsed.data.expires * 1000 < Date.now()) throw new AppError("forbidden", "This download link has expired.");
    return serveObject(c, key);
  });
}
