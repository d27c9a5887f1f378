/**
 * The three kinds of endpoint a transfer moves bytes between, behind one shape: an HTTP(S) URL, an
 * S3-compatible bucket (s3.ts), and the owner's own blobs (read) or objects (read and written) in
 * this service's R2. Every body streams; a part is sent with its length known up front (S3 and R2
 * need it), through the transfer's digest.
 */
import { checkOwnedResource } from "../../../kind/owned";
import { allowsPrivateTargets, checkEgressUrl } from "../../../delivery/egress-guard";
import { fetchStreamGuarded } from "../../../delivery/fetch-guarded";
import type { Env } from "../../../env";
import { AppError, unwrap, fieldError } from "../../../http/errors";
import { resourceStub } from "../../../stubs";
import { S3Client } from "./s3";
import { pump, type Digest } from "./hashing";
import type { Endpoint } from "./schema";

/** An endpoint as kept (sealed): an object endpoint's token replaced by its resource and the R2 key read or written. */
export type Resolved = Exclude<Endpoint, { type: "object" }> | { type: "object"; resource_id: string; key: string };

export interface SourceInfo {
  size: number;
  etag: string | null;
  contentType: string | null;
  /** Whether the source serves byte ranges: a ranged source is copied part by part (resumable). */
  ranged: boolean;
}

export type DonePart = { part_number: number; size: number; etag: string };

/**
 * Checks an endpoint and resolves an object endpoint's token (the one await a transfer's start spends on D1 and another
 * resource).
 */
export async function resolve(env: Env, ep: Endpoint, field: "source" | "destination"): Promise<Resolved> {
  const allowPrivate = allowsPrivateTargets(env.ALLOW_PRIVATE_TARGETS);
  if (ep.type === "url") return { ...ep, url: checkEgressUrl(ep.url, allowPrivate, `${field}.url`).href };
  if (ep.type === "s3") {
    checkEgressUrl(ep.endpoint, allowPrivate, `${field}.endpoint`);
    return ep;
  }
  const kinds = field === "source" ? ["blobs", "objects"] : ["objects"];
  const id = await checkOwnedResource(env, ep.management_token, kinds, `${field}.management_token`);
  if (field === "destination") return { type: "object", resource_id: id, key: `${id}/object/${crypto.randomUUID()}` };
  const shared = unwrap(await resourceStub(env, id).sharedObject());
  if (!shared) throw fieldError("source.management_token", "that resource holds no content yet");
  return { type: "object", resource_id: id, key: shared.key };
}

/** The source's size, ETag, type and whether it serves ranges; a source whose size cannot be known is refused. */
export async function probe(env: Env, src: Resolved): Promise<SourceInfo> {
  if (src.type === "s3") return { ...(await new S3Client(env, src, "source").head()), ranged: true };
  if (src.type === "object") {
    const head = await env.BUCKET.head(src.key);
    if (!head) throw fieldError("source.management_token", "that resource's content is gone");
    return { size: head.size, etag: head.httpEtag, contentType: head.httpMetadata?.contentType ?? null, ranged: true };
  }
  // One byte asked for: a 206 tells the size (Content-Range) and that ranges work; a 200 tells the size by its
  // Content-Length, if it has one.
  const { res } = await fetchStreamGuarded(env, src.url, {
    headers: { ...src.headers, range: "bytes=0-0" },
    field: "source.url",
  });
  await res.body?.cancel().catch(() => undefined);
  if (res.status === 416)
    return { size: 0, etag: res.headers.get("etag"), contentType: res.headers.get("content-type"), ranged: false };
  if (!res.ok) throw fieldError("source.url", `the source answered ${res.status}`);
  const total = /\/(\d+)$/.exec(res.headers.get("content-range") ?? "")?.[1];
  const length = res.headers.get("content-length");
  const size =
    res.status === 206 && total
      ? Number(total)
      : res.status === 200 && length !== null && !res.headers.get("content-encoding")
        ? Number(length)
        : null;
  if (size === null)
    throw fieldError(
      "source.url",
      "the source tells neither its size (Content-Length) nor serves ranges: a transfer needs to know what it moves",
    );
  return {
    size,
    etag: res.headers.get("etag"),
    contentType: res.headers.get("content-type"),
    ranged: res.status === 206,
  };
}

/**
 * Bytes `start`…`end` (inclusive) of the source, streaming; the whole when `end` is its last byte and it serves no
 * ranges.
 */
export async function read(
  env: Env,
  src: Resolved,
  start: number,
  end: number,
  ranged: boolean,
): Promise<ReadableStream<Uint8Array>> {
  if (src.type === "s3") return new S3Client(env, src, "source").range(start, end);
  if (src.type === "object") {
    const object = await env.BUCKET.get(src.key, { range: { offset: start, length: end - start + 1 } });
    if (!object)
      throw new AppError(
        "upstream_failed",
        "The source's content is gone (replaced or deleted since the transfer started).",
      );
    return object.body;
  }
  const { res } = await fetchStreamGuarded(env, src.url, {
    headers: ranged ? { ...src.headers, range: `bytes=${start}-${end}` } : src.headers,
    field: "source.url",
  });
  if (res.status !== (ranged ? 206 : 200) || !res.body) {
    await res.body?.cancel().catch(() => undefined);
    throw new AppError("upstream_failed", `The source answered ${res.status} for bytes ${start}-${end}.`);
  }
  return res.body;
}

/** What a parted destination holds once its upload completed, streaming: hashed when the transfer's digest was lost. */
export async function readBack(env: Env, dst: Resolved, size: number): Promise<ReadableStream<Uint8Array>> {
  if (dst.type === "s3") return new S3Client(env, dst, "destination").range(0, size - 1);
  if (dst.type === "object") {
    const object = await env.BUCKET.get(dst.key);
    if (!object)
      throw new AppError(
        "upstream_failed",
        "The destination's upload completed, but its content is not there to hash.",
      );
    return object.body;
  }
  throw new Error("a URL destination takes no parts");
}

/** A destination that takes parts (S3, objects); a URL takes the whole body in one PUT. */
export const takesParts = (dst: Resolved) => dst.type !== "url";

/** Starts the destination's multipart upload; answers its id. */
export async function beginUpload(env: Env, dst: Resolved, contentType: string): Promise<string> {
  if (dst.type === "s3") return new S3Client(env, dst, "destination").createUpload(contentType);
  if (dst.type === "object")
    return (await env.BUCKET.createMultipartUpload(dst.key, { httpMetadata: { contentType } })).uploadId;
  throw new Error("a URL destination takes no parts");
}

/** Sends one part (`body`, exactly `length` bytes, through `digest` when there is one); answers its ETag. */
export async function sendPart(
  env: Env,
  dst: Resolved,
  uploadId: string,
  partNumber: number,
  body: ReadableStream<Uint8Array>,
  length: number,
  digest: Digest | null,
): Promise<string> {
  const sized = new FixedLengthStream(length);
  const piped = pump(body, sized.writable, digest);
  const sent =
    dst.type === "s3"
      ? new S3Client(env, dst, "destination").uploadPart(uploadId, partNumber, sized.readable)
      : dst.type === "object"
        ? env.BUCKET.resumeMultipartUpload(dst.key, uploadId)
            .uploadPart(partNumber, sized.readable)
            .then((p) => p.etag)
        : Promise.reject(new Error("a URL destination takes no parts"));
  const [etag] = await Promise.all([sent, piped]);
  return etag;
}

/**
 * Completes the destination's upload; answers the ETag it reports. A completion that already happened (a run that
 * completed, then failed or died before recording it) is recognised by the object's size: S3 then answers NoSuchUpload,
 * or a store's own error (5xx, which S3 also answers for a completion to retry, and s3rver for an upload it already
 * assembled).
 */
export async function completeUpload(
  env: Env,
  dst: Resolved,
  uploadId: string,
  parts: DonePart[],
  size: number,
): Promise<string | null> {
  if (dst.type === "s3") {
    const client = new S3Client(env, dst, "destination");
    let etag: string | null;
    try {
      etag = await client.complete(uploadId, parts);
    } catch (err) {
      if (!(err instanceof AppError && err.status >= 500)) throw err;
      const there = await client.head().catch(() => null);
      if (there?.size === size) return there.etag;
      throw err; // not completed: the next run tries again
    }
    if (etag !== null) return etag;
    const head = await client.head();
    if (head.size !== size)
      throw new AppError(
        "upstream_failed",
        "The destination no longer knows the upload, and holds no object of the transfer's size.",
      );
    return head.etag;
  }
  if (dst.type === "object") {
    try {
      return (
        await env.BUCKET.resumeMultipartUpload(dst.key, uploadId).complete(
          parts.map((p) => ({ partNumber: p.part_number, etag: p.etag })),
        )
      ).httpEtag;
    } catch (err) {
      const head = await env.BUCKET.head(dst.key);
      if (head?.size === size) return head.httpEtag;
      throw err;
    }
  }
  throw new Error("a URL destination takes no parts");
}

/**
 * The whole body in one request (a URL destination, or a source without ranges), through `digest`; answers the ETag
 * reported.
 */
export async function sendWhole(
  env: Env,
  dst: Resolved,
  body: ReadableStream<Uint8Array>,
  size: number,
  contentType: string,
  digest: Digest,
): Promise<string | null> {
  // An empty body goes as bytes: a zero-length stream would leave R2 waiting for bytes that never come.
  const sized = size > 0 ? new FixedLengthStream(size) : null;
  const piped = sized ? pump(body, sized.writable, digest) : body.cancel();
  const payload = sized?.readable ?? new Uint8Array(0);
  const sent = (async () => {
    if (dst.type === "s3") return new S3Client(env, dst, "destination").put(payload, contentType);
    if (dst.type === "object")
      return (await env.BUCKET.put(dst.key, payload, { httpMetadata: { contentType } }))?.httpEtag ?? null;
    const url = checkEgressUrl(dst.url, allowsPrivateTargets(env.ALLOW_PRIVATE_TARGETS), "destination.url");
    const res = await fetch(url, {
      method: "PUT",
      headers: { ...dst.headers, "content-type": contentType },
      body: payload,
      redirect: "manual",
    });
    await res.body?.cancel().catch(() => undefined);
    if (!res.ok) throw new AppError("upstream_failed", `The destination answered ${res.status} to the PUT.`);
    return res.headers.get("etag");
  })();
  const [etag] = await Promise.all([sent, piped]);
  return etag;
}

/** Gives up the destination's open upload (a cancelled transfer); failures are the store's to expire. */
export async function abortUpload(env: Env, dst: Resolved, uploadId: string): Promise<void> {
  if (dst.type === "s3") await new S3Client(env, dst, "destination").abort(uploadId);
  else if (dst.type === "object") await env.BUCKET.resumeMultipartUpload(dst.key, uploadId).abort();
}

/** An object destination's new content, offered to its resource once every byte is in R2. */
export async function handOver(
  env: Env,
  dst: Resolved,
  size: number,
  sha256: string,
  contentType: string,
  transferId: string,
): Promise<void> {
  if (dst.type !== "object") return;
  unwrap(
    await resourceStub(env, dst.resource_id).adoptObject({
      key: dst.key,
      size,
      sha256,
      contentType,
      source: transferId,
    }),
  );
}

/** The endpoint without its secrets, for the record. */
export function shown(ep: Resolved): Record<string, unknown> {
  if (ep.type === "url") return { type: "url", url: ep.url, header_names: Object.keys(ep.headers) };
  if (ep.type === "s3")
    return {
      type: "s3",
      endpoint: ep.endpoint,
      region: ep.region,
      bucket: ep.bucket,
      key: ep.key,
      access_key_id: ep.access_key_id,
    };
  return { type: "object", resource_id: ep.resource_id };
}
