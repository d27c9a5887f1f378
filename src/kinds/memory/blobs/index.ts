/**
 * blobs: park up to 100 MB for up to 48 h, streamed in and out of R2, optionally behind a public link (transfer.sh).
 */
import { rangeHeader } from "../../../kind/downloads";
import { kindOf } from "../../../kind/kind";
import { definePublicFace } from "../../../kind/public-face";
import { discard, init, publicDownload, record, remove, shared, stored, upload, usage, view } from "./store";
import { blobConfig, blobView, MAX_BLOB_BYTES, storedObject, type BlobConfig } from "./schema";
import { rawBodyInput, noInput } from "../../../openapi/schemas";
import { TABLES } from "./store";

const OP_PRICE = 100; // µUSD

const kind = kindOf<BlobConfig>();

export const blobs = kind.define({
  kind: "blobs",
  family: "memory",
  title: "Blob",
  summary:
    "Blob parking: up to 100 MB for up to 48 h, streamed to R2, sha256, optional public link with a download limit.",
  createSchema: blobConfig,
  example: { content_type: "application/pdf", filename: "report.pdf", public: true, max_downloads: 3 },
  migrations: [{ sql: TABLES }],
  dayPriceMicro: 5000,
  defaultTtlSeconds: 24 * 3600,
  maxTtlSeconds: 48 * 3600,
  limits: { max_bytes: MAX_BLOB_BYTES },
  init,
  usage,
  exportData: (store, config) => view(store, config),
  shared,
  public: definePublicFace<BlobConfig>({
    enabled: (config) => config.public,
    routes: [
      {
        name: "download",
        path: "",
        methods: ["GET"],
        maxBodyBytes: 0,
        answers: ["bytes"],
        summary: "Download the blob (counts toward max_downloads; Range honoured); HEAD only looks.",
      },
    ],
    handle: publicDownload,
  }),
  ops: [
    kind.op({
      name: "upload",
      method: "put",
      path: "/content",
      summary: `Upload the bytes (up to ${MAX_BLOB_BYTES}), replacing any earlier upload`,
      priceMicro: 10_000,
      input: rawBodyInput,
      output: blobView,
      rawBody: true,
      maxBodyBytes: MAX_BLOB_BYTES,
      errors: [413],
      example: { headers: { "content-type": "application/pdf" }, bytes: "%PDF-1.7 (the report's bytes)" },
      prepare: upload,
      run: (store, config, _input, up) => record(store, config, up),
      discard,
    }),
    kind.op({
      name: "download",
      method: "get",
      path: "/content",
      summary: "Download the bytes (Range honoured)",
      priceMicro: 1000,
      input: noInput,
      headers: rangeHeader,
      output: storedObject,
      servesObject: true,
      errors: [416],
      example: { headers: { range: "bytes=0-7" }, after: ["upload"] },
      run: (store, _config, input: { range?: string }) => stored(store, input.range),
    }),
    kind.op({
      name: "get",
      method: "get",
      path: "",
      summary: "The blob's size, sha256, type and download count",
      priceMicro: OP_PRICE,
      input: noInput,
      output: blobView,
      run: (store, config) => view(store, config),
    }),
    kind.op({
      name: "delete",
      method: "delete",
      path: "/content",
      summary: "Delete the bytes now (the resource stays until it ends)",
      priceMicro: OP_PRICE,
      input: noInput,
      output: blobView,
      example: { after: ["upload"] },
      run: (store, config) => remove(store, config),
    }),
  ],
});
