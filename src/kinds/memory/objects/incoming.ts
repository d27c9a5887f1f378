/**
 * Bytes that arrive in one go: a PUT body, or a source_url the service fetches
 * (through the egress guard, every redirect hop checked). Both stream into a fresh
 * key and are hashed on the way, never held whole: with a known length as one R2
 * put; a source without one (chunked, or compressed in transit) as an R2 multipart
 * upload in fixed-size parts, one part in memory at a time. Whatever fails leaves
 * nothing in R2.
 */
import { AppError } from "../../../http/errors";
import type { PrepareContext } from "../../../kind/kind";
import { fetchStreamGuarded } from "../../../delivery/fetch-guarded";
import { hashingTap, putStream, type Stored } from "../../../kind/r2";
import { httpMetadata, newObjectKey, type Landed } from "./store";
import { STREAM_PART_BYTES, type FetchInput, type ObjectConfig } from "./schema";
import type { RawBodyInput } from "../../../openapi/schemas";
import { isMediaType } from "../../../http/header-fields";

/** A single PUT: like a blob's upload, up to the request limit. */
export async function putUpload(
  ctx: PrepareContext,
  config: ObjectConfig,
  input: RawBodyInput,
  body: ReadableStream<Uint8Array> | null,
): Promise<Landed> {
  if (!body) throw new AppError("invalid_request", "Send the object's bytes as the request body.");
  const key = newObjectKey(ctx.resourceId);
  const contentType = input.content_type;
  try {
    const stored = await putStream(ctx.env.BUCKET, key, body, input.content_length, {
      httpMetadata: httpMetadata(config, contentType),
    });
    return { ...stored, key, contentType, origin: "upload", sourceUrl: null };
  } catch (err) {
    await ctx.env.BUCKET.delete(key);
    throw new AppError(
      "invalid_request",
      (
        `The upload did not complete: the body must be exactly Content-Length (${input.content_length}` +
        `) bytes. ${err instanceof Error ? err.message : ""}`
      ).trim(),
    );
  }
}

/** The body's length when the headers state it for the bytes we will read (a decoded body has another length). */
function declaredLength(headers: Headers): number | null {
  const length = headers.get("content-length");
  const encoding = headers.get("content-encoding");
  if (!length || !/^\d+$/.test(length) || (encoding && encoding.toLowerCase() !== "identity")) return null;
  return Number(length);
}

const tooLarge = (url: string, max: number) =>
  new AppError("payload_too_large", `${url} is larger than ${max} bytes (max_bytes); nothing was stored.`);

/** Copies the source into a fresh key; the operation's run step makes it the object. */
export async function fetchSource(ctx: PrepareContext, config: ObjectConfig, input: FetchInput): Promise<Landed> {
  const headers = Object.fromEntries(Object.entries(input.headers).map(([k, v]) => [k.toLowerCase(), v]));
  const { url, res } = await fetchStreamGuarded(ctx.env, input.source_url, { headers, field: "source_url" });
  const length = declaredLength(res.headers);
  if (!res.ok || (length !== null && length > input.max_bytes)) {
    await res.body?.cancel().catch(() => undefined);
    if (!res.ok) throw new AppError("upstream_failed", `${url} answered ${res.status}; nothing was stored.`);
    throw tooLarge(url, input.max_bytes);
  }
  const key = newObjectKey(ctx.resourceId);
  // A source's type is kept only when it is well formed: it is served again as a header.
  const sourceType = res.headers.get("content-type");
  const contentType = sourceType && isMediaType(sourceType) ? sourceType : "application/octet-stream";
  const options = { httpMetadata: httpMetadata(config, contentType) };
  const body = res.body ?? new Blob([]).stream();
  try {
    const stored =
      length !== null
        ? await putStream(ctx.env.BUCKET, key, body, length, options)
        : await putInParts(ctx, key, body, input.max_bytes, options);
    return { ...stored, key, contentType, origin: "fetch", sourceUrl: url };
  } catch (err) {
    await ctx.env.BUCKET.delete(key).catch(() => undefined);
    if (err instanceof AppError) throw err;
    throw new AppError(
      "upstream_failed",
      `Copying ${url} failed part-way (${err instanceof Error ? err.message : String(err)}); nothing was stored.`,
    );
  }
}

/**
 * A body of unknown length into R2 as a multipart upload of STREAM_PART_BYTES parts (R2 wants
 * every part but the last of one size, and a part's length before it is sent). Stops at
 * `max` bytes, and between parts when the resource has ended; an unfinished upload is aborted.
 */
async function putInParts(
  ctx: PrepareContext,
  key: string,
  body: ReadableStream<Uint8Array>,
  max: number,
  options: R2MultipartOptions,
): Promise<Stored> {
  const { tap, sha256 } = hashingTap();
  const reader = body.pipeThrough(tap).getReader();
  const upload = await ctx.env.BUCKET.createMultipartUpload(key, options);
  const parts: R2UploadedPart[] = [];
  let buffer = new Uint8Array(STREAM_PART_BYTES);
  let filled = 0;
  let total = 0;
  const flush = async () => {
    ctx.stillHere();
    parts.push(await upload.uploadPart(parts.length + 1, buffer.subarray(0, filled)));
    buffer = new Uint8Array(STREAM_PART_BYTES);
    filled = 0;
  };
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.length;
      if (total > max)
        throw new AppError(
          "payload_too_large",
          `The source sent more than ${max} bytes (max_bytes); the copy was stopped and nothing was stored.`,
        );
      for (let offset = 0; offset < value.length;) {
        const n = Math.min(value.length - offset, STREAM_PART_BYTES - filled);
        buffer.set(value.subarray(offset, offset + n), filled);
        filled += n;
        offset += n;
        if (filled === STREAM_PART_BYTES) await flush();
      }
    }
    if (total === 0) {
      // R2 assembles no object from no parts: an empty source is an empty put.
      await upload.abort();
      const empty = await ctx.env.BUCKET.put(key, new Uint8Array(0), options);
      return { size: empty.size, sha256: await sha256() };
    }
    if (filled > 0) await flush();
    await upload.complete(parts);
    return { size: total, sha256: await sha256() };
  } catch (err) {
    await reader.cancel().catch(() => undefined);
    await upload.abort().catch(() => undefined);
    throw err;
  }
}
