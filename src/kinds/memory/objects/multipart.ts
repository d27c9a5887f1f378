/**
 * The R2 side of a caller's multipart upload, run as the asynchronous steps of its
 * operations (create, part, complete, abort) and at the resource's end. Each step
 * reads the upload's record, talks to R2, and leaves recording to the operation's
 * synchronous step (uploads.ts), which checks again atomically.
 */
import { AppError } from "../../../http/errors";
import type { PrepareContext } from "../../../kind/kind";
import { sizedAndHashed, type Stored } from "../../../kind/r2";
import { toHex } from "../../../bytes";
import { httpMetadata, newObjectKey, type Landed } from "./store";
import { checkPartFits, selectParts } from "./layout";
import {
  checkNoneOpen,
  newUploadId,
  openUpload,
  openUploads,
  partSizes,
  partsOf,
  uploadOf,
  type PartRow,
  type UploadRow,
} from "./uploads";
import type { CompleteInput, CreateUploadInput, ObjectConfig, PartInput } from "./schema";

const resume = (bucket: R2Bucket, up: UploadRow) => bucket.resumeMultipartUpload(up.object_key, up.r2_upload_id);

/** R2 says an upload is gone (completed, aborted, or expired by its 7-day lifecycle rule). */
const noSuchUpload = (err: unknown) => err instanceof Error && /10024|upload does not exist/i.test(err.message);

const gone = (uploadId: string) =>
  new AppError(
    "conflict",
    `Storage no longer holds upload ${uploadId} (an earlier complete or abort reached it, or it was ` +
      `refused after it did): abort it and start a new upload.`,
  );

export type NewUpload = Pick<UploadRow, "upload_id" | "r2_upload_id" | "object_key" | "content_type">;

export async function createUpload(
  ctx: PrepareContext,
  config: ObjectConfig,
  input: CreateUploadInput,
): Promise<NewUpload> {
  checkNoneOpen(ctx.sql); // spares R2 an upload the record step would refuse
  const uploadId = newUploadId();
  const key = newObjectKey(ctx.resourceId, uploadId);
  const upload = await ctx.env.BUCKET.createMultipartUpload(key, {
    httpMetadata: httpMetadata(config, input.content_type),
  });
  return {
    upload_id: uploadId,
    r2_upload_id: upload.uploadId,
    object_key: key,
    content_type: config.content_type ?? input.content_type,
  };
}

/** The create was refused after R2 made the upload: R2 forgets it. */
export async function discardUpload(ctx: PrepareContext, up: NewUpload): Promise<void> {
  await ctx.env.BUCKET.resumeMultipartUpload(up.object_key, up.r2_upload_id).abort();
}

export type UploadedPart = Omit<PartRow, "uploaded_at"> & { upload_id: string };

/**
 * Streams one part into R2, hashing it on the way. A refused recording needs no undo: R2 keeps
 * the part only until the upload is completed (with the recorded parts) or aborted.
 */
export async function uploadPart(
  ctx: PrepareContext,
  input: PartInput,
  body: ReadableStream<Uint8Array> | null,
): Promise<UploadedPart> {
  if (input.content_length === 0) {
    throw new AppError(
      "validation_failed",
      "A part holds at least one byte (an empty object is a PUT of …/content with no body).",
      { errors: [{ path: "header.content-length", message: "must be at least 1 for a part" }] },
    );
  }
  if (!body) throw new AppError("invalid_request", "Send the part's bytes as the request body.");
  const up = openUpload(ctx.sql, input.upload_id);
  const partNumber = Number(input.part_number);
  checkPartFits(partSizes(ctx.sql, up.upload_id), { part_number: partNumber, size: input.content_length });
  const value = sizedAndHashed(body, input.content_length);
  try {
    const [part] = await Promise.all([resume(ctx.env.BUCKET, up).uploadPart(partNumber, value.stream), value.done]);
    return {
      upload_id: up.upload_id,
      part_number: partNumber,
      size: input.content_length,
      etag: part.etag,
      sha256: await value.sha256(),
    };
  } catch (err) {
    if (noSuchUpload(err)) throw gone(up.upload_id);
    throw new AppError(
      "invalid_request",
      (
        `The part did not arrive whole: the body must be exactly Content-Length (${input.content_length}` +
        `) bytes. ${err instanceof Error ? err.message : ""}`
      ).trim(),
    );
  }
}

/**
 * Hashes a stored object by streaming it back (never held whole): a multipart object's sha256 exists only once it is
 * assembled.
 */
async function hashObject(bucket: R2Bucket, key: string): Promise<Stored> {
  const object = await bucket.get(key);
  if (!object) throw new AppError("not_found", "The assembled object is gone (the resource is ending).");
  const digest = new crypto.DigestStream("SHA-256");
  await object.body.pipeTo(digest);
  return { size: object.size, sha256: toHex(new Uint8Array(await digest.digest)) };
}

export type Completed = Landed & { uploadId: string };

/** Asks R2 to assemble the chosen parts, then reads the object back once for its sha256. */
export async function completeUpload(
  ctx: PrepareContext,
  input: CompleteInput & { upload_id: string },
): Promise<Completed> {
  const up = openUpload(ctx.sql, input.upload_id);
  const parts = selectParts(partsOf(ctx.sql, up.upload_id), input.parts);
  try {
    await resume(ctx.env.BUCKET, up).complete(parts.map((p) => ({ partNumber: p.part_number, etag: p.etag })));
  } catch (err) {
    if (noSuchUpload(err)) throw gone(up.upload_id);
    // The checks above follow R2's rules, so this is a part R2 holds in another version than recorded.
    throw new AppError(
      "conflict",
      `Storage refused the parts (${err instanceof Error ? err.message : String(err)}): upload again any ` +
        `part you replaced, then complete.`,
    );
  }
  try {
    const stored = await hashObject(ctx.env.BUCKET, up.object_key);
    return {
      ...stored,
      key: up.object_key,
      contentType: up.content_type,
      origin: "multipart",
      sourceUrl: null,
      uploadId: up.upload_id,
    };
  } catch (err) {
    await ctx.env.BUCKET.delete(up.object_key); // assembled but never recorded: nothing may stay behind
    throw err;
  }
}

/** Aborts in R2 (an upload already gone there is fine); an aborted one again is a no-op, a completed one a 409. */
export async function abortUpload(ctx: PrepareContext, input: { upload_id: string }): Promise<void> {
  const up = uploadOf(ctx.sql, input.upload_id);
  if (up.state === "completed")
    throw new AppError(
      "conflict",
      `Upload ${up.upload_id} is completed; delete the object with DELETE …/content instead.`,
    );
  if (up.state === "aborted") return;
  await resume(ctx.env.BUCKET, up)
    .abort()
    .catch((err: unknown) => {
      if (!noSuchUpload(err)) throw err;
    });
}

/**
 * The kind's end hook: R2 keeps an unfinished upload's parts outside the bucket listing, so
 * deleting the resource's prefix would not reach them. (Should this fail, R2's default
 * lifecycle rule aborts unfinished uploads after 7 days.)
 */
export async function abortOpenUploads(ctx: PrepareContext): Promise<void> {
  for (const up of openUploads(ctx.sql)) {
    await resume(ctx.env.BUCKET, up)
      .abort()
      .catch((err: unknown) => {
        if (!noSuchUpload(err)) console.error(`objects: aborting ${up.upload_id} of ${ctx.resourceId} failed`, err);
      });
  }
}
