/**
 * objects: one large object per resource (up to 2 GB, up to 7 days) in R2, arriving by a
 * single PUT, an S3-style multipart upload (create, parts, complete, abort; resumable by
 * listing the parts), or a source_url the service copies server-side; served with Range
 * and its sha256.
 *
 * The source_url copy is a synchronous operation (no status to poll): the call answers once
 * the object is in, with its size and sha256, and a failed copy is not charged. Workers and
 * Durable Objects have no wall-clock limit while they wait on I/O, and a copy spends little
 * of the CPU limit (streamed I/O, native hashing); a source that stalls for 30 s fails.
 */
import { rawBodyInput, noInput } from "../../../openapi/schemas";
import { rangeHeader } from "../../../kind/downloads";
import { kindOf } from "../../../kind/kind";
import { currentKey, discardLanded, exportAll, init, record, remove, stored, usage, view } from "./store";
import { fetchSource, putUpload } from "./incoming";
import { abortOpenUploads, abortUpload, completeUpload, createUpload, discardUpload, uploadPart } from "./multipart";
import { checkPartFits } from "./layout";
import {
  closeAborted,
  finishUpload,
  insertUpload,
  listParts,
  openUpload,
  partSizes,
  upsertPart,
  uploadOf,
  uploadView,
} from "./uploads";
import {
  MAX_OBJECT_BYTES,
  MAX_PART_NUMBER,
  MAX_REQUEST_BYTES,
  MIN_PART_BYTES,
  completeInput,
  createUploadInput,
  fetchInput,
  objectConfig,
  objectView,
  partParam,
  partPage,
  partView,
  partsQuery,
  storedObject,
  uploadParam,
  uploadView as uploadSchema,
  type ObjectConfig,
} from "./schema";
import { digestHeaders } from "./digest";
import { TABLES as ENGINE_TABLES } from "./store";
import { TABLES as UPLOADS_TABLES } from "./uploads";

const OP_PRICE = 100; // µUSD
/** A streamed R2 write of up to 100 MB, hashed on the way. */
const UPLOAD_PRICE = 10_000;
/** A guarded server-side copy of up to 2 GB. */
const FETCH_PRICE = 20_000;
/** Assembling up to 2 GB in R2 and reading it all back for its sha256. */
const COMPLETE_PRICE = 10_000;

const kind = kindOf<ObjectConfig>();

export const objects = kind.define({
  kind: "objects",
  family: "memory",
  title: "Object",
  summary:
    `Large object: up to ${MAX_OBJECT_BYTES} bytes for up to 7 days in R2, by PUT (≤ ${MAX_REQUEST_BYTES}` +
    `), multipart upload (create, parts, complete, abort, resume) ` +
    "or a source_url fetched server-side; Range reads; sha256.",
  createSchema: objectConfig,
  example: { content_type: "application/zip", filename: "dataset.zip" },
  migrations: [{ sql: [...ENGINE_TABLES, ...UPLOADS_TABLES] }],
  dayPriceMicro: 20_000,
  defaultTtlSeconds: 24 * 3600,
  maxTtlSeconds: 7 * 86400,
  limits: {
    max_bytes: MAX_OBJECT_BYTES,
    max_request_bytes: MAX_REQUEST_BYTES,
    min_part_bytes: MIN_PART_BYTES,
    max_part_number: MAX_PART_NUMBER,
  },
  init,
  usage,
  exportData: exportAll,
  // A link may serve the current object (links/).
  shared: (store) => {
    const key = currentKey(store.sql);
    return key ? { key } : null;
  },
  // A transfer (transfers/) may copy into it: its bytes become the object once they are all in R2.
  adopt: (store, config, object) =>
    void record(store, config, {
      key: object.key,
      size: object.size,
      sha256: object.sha256,
      contentType: object.contentType,
      origin: "transfer",
      sourceUrl: null,
    }),
  end: (ctx) => abortOpenUploads(ctx),
  ops: [
    kind.op({
      name: "get",
      method: "get",
      path: "",
      summary: "The object's size, sha256, type and origin, and the open multipart upload",
      priceMicro: OP_PRICE,
      input: noInput,
      output: objectView,
      run: (store, config) => view(store, config),
    }),
    kind.op({
      name: "upload",
      method: "put",
      path: "/content",
      summary:
        `Upload the bytes in one request (up to ${MAX_REQUEST_BYTES}; larger: multipart or fetch), replacing ` +
        `the object`,
      priceMicro: UPLOAD_PRICE,
      input: rawBodyInput,
      output: objectView,
      rawBody: true,
      maxBodyBytes: MAX_REQUEST_BYTES,
      errors: [413],
      example: { headers: { "content-type": "text/csv" }, bytes: "date,visits\n2026-11-23,1204\n" },
      prepare: putUpload,
      run: (store, config, _input, landed) => record(store, config, landed),
      discard: discardLanded,
    }),
    kind.op({
      name: "download",
      method: "get",
      path: "/content",
      summary: "Download the bytes (Range honoured; sha256 in Repr-Digest)",
      priceMicro: 1000,
      input: noInput,
      headers: rangeHeader,
      output: storedObject,
      servesObject: true,
      errors: [416],
      responseHeaders: digestHeaders,
      example: { headers: { range: "bytes=0-9" }, after: ["upload"] },
      run: (store, _config, input: { range?: string }) => stored(store, input.range),
    }),
    kind.op({
      name: "delete",
      method: "delete",
      path: "/content",
      summary: "Delete the bytes now (the resource stays until it ends)",
      priceMicro: OP_PRICE,
      input: noInput,
      output: objectView,
      run: (store, config) => remove(store, config),
    }),
    kind.op({
      name: "fetch",
      method: "post",
      path: "/fetch",
      summary:
        "Copy source_url into the object server-side (streamed, every redirect hop checked); answers once " +
        "it is in. A failed copy is not charged",
      priceMicro: FETCH_PRICE,
      input: fetchInput,
      output: objectView,
      errors: [413, 502],
      example: {
        input: {
          source_url: "https://example.com/exports/visits.csv",
          headers: { authorization: "Bearer <the source's token>" },
          max_bytes: 500000000,
        },
      },
      prepare: (ctx, config, input) => fetchSource(ctx, config, input),
      run: (store, config, _input, landed) => record(store, config, landed),
      discard: discardLanded,
    }),
    kind.op({
      name: "create_upload",
      method: "post",
      path: "/uploads",
      summary: "Start a multipart upload (one open at a time)",
      priceMicro: 1000,
      input: createUploadInput,
      output: uploadSchema,
      errors: [409],
      example: { input: { content_type: "application/x-tar" } },
      prepare: (ctx, config, input) => createUpload(ctx, config, input),
      run: (store, _config, _input, created) => insertUpload(store, created),
      discard: discardUpload,
    }),
    kind.op({
      name: "get_upload",
      method: "get",
      path: "/uploads/{upload_id}",
      summary: "A multipart upload's state, parts and bytes so far",
      priceMicro: OP_PRICE,
      params: uploadParam,
      input: noInput,
      output: uploadSchema,
      errors: [404],
      example: { params: { upload_id: "up_7c2f0e9d1b3a4c5d6e7f8091a2b3c4d5" }, after: ["create_upload"] },
      run: (store, _config, input) => uploadView(store.sql, uploadOf(store.sql, input.upload_id)),
    }),
    kind.op({
      name: "list_parts",
      method: "get",
      path: "/uploads/{upload_id}/parts",
      summary: "The parts uploaded so far, by part number (to resume an upload)",
      priceMicro: OP_PRICE,
      params: uploadParam,
      input: partsQuery,
      output: partPage,
      errors: [404],
      example: {
        params: { upload_id: "up_7c2f0e9d1b3a4c5d6e7f8091a2b3c4d5" },
        input: { limit: 100 },
        after: ["create_upload", "upload_part"],
      },
      run: (store, _config, input) => listParts(store.sql, input.upload_id, input.limit, input.cursor),
    }),
    kind.op({
      name: "upload_part",
      method: "put",
      path: "/uploads/{upload_id}/parts/{part_number}",
      summary:
        `Upload one part (up to ${MAX_REQUEST_BYTES}); every part but the last at least ${MIN_PART_BYTES}` +
        ` bytes and all the same size (R2's rule, checked on arrival: 422). Sending a part number again ` +
        `replaces it`,
      priceMicro: 2000,
      params: partParam,
      input: rawBodyInput,
      output: partView,
      rawBody: true,
      maxBodyBytes: MAX_REQUEST_BYTES,
      errors: [404, 409, 413],
      example: {
        params: { upload_id: "up_7c2f0e9d1b3a4c5d6e7f8091a2b3c4d5", part_number: "1" },
        bytes: "the last (here the only) part may be short",
        after: ["create_upload"],
      },
      prepare: (ctx, _config, input, body) => uploadPart(ctx, input, body),
      run: (store, _config, _input, part) => {
        openUpload(store.sql, part.upload_id);
        checkPartFits(partSizes(store.sql, part.upload_id), part);
        return upsertPart(store, part.upload_id, part);
      },
    }),
    kind.op({
      name: "complete",
      method: "post",
      path: "/uploads/{upload_id}/complete",
      summary:
        "Assemble the parts into the object (replacing any earlier one); its sha256 is computed now, by " +
        "reading it back once",
      priceMicro: COMPLETE_PRICE,
      params: uploadParam,
      input: completeInput,
      output: objectView,
      errors: [404, 409],
      example: {
        params: { upload_id: "up_7c2f0e9d1b3a4c5d6e7f8091a2b3c4d5" },
        input: {},
        after: ["create_upload", "upload_part"],
      },
      prepare: (ctx, _config, input) => completeUpload(ctx, input),
      run: (store, config, _input, done) => {
        openUpload(store.sql, done.uploadId);
        finishUpload(store, done.uploadId, "completed");
        return record(store, config, done);
      },
      discard: (ctx, done) => discardLanded(ctx, done),
    }),
    kind.op({
      name: "abort",
      method: "delete",
      path: "/uploads/{upload_id}",
      summary: "Abort a multipart upload: R2 drops its parts",
      priceMicro: OP_PRICE,
      params: uploadParam,
      input: noInput,
      output: uploadSchema,
      errors: [404, 409],
      example: { params: { upload_id: "up_7c2f0e9d1b3a4c5d6e7f8091a2b3c4d5" }, after: ["create_upload"] },
      prepare: (ctx, _config, input) => abortUpload(ctx, input),
      run: (store, _config, input) => closeAborted(store, input.upload_id),
    }),
  ],
});
