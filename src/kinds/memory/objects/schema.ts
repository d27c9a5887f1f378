/** Request and response shapes of objects, and their limits; the same schemas validate, type and document. */
import type { RawBodyInput } from "../../../openapi/schemas";
import { z } from "@hono/zod-openapi";
import { CONNECTION_HEADERS, fileName, headerFields, mediaType } from "../../../http/header-fields";
import { pageLimit, seqCursor, pageOf, httpUrl } from "../../../openapi/schemas";

/** seed-spec: 2 GB (decimal, as the spec writes MiB where it means binary units). */
export const MAX_OBJECT_BYTES = 2_000_000_000;
/** One request body: a single PUT or one part. Cloudflare refuses larger request bodies on most plans. */
export const MAX_REQUEST_BYTES = 100_000_000;
/** R2: every part but the last is at least 5 MiB... */
export const MIN_PART_BYTES = 5 * 1024 * 1024;
/** ...and part numbers run from 1 to 10,000. */
export const MAX_PART_NUMBER = 10_000;
/** A source without Content-Length is copied in parts of this size (one part is held in memory at a time). */
export const STREAM_PART_BYTES = 8 * 1024 * 1024;

export const objectConfig = z.object({
  content_type: mediaType
    .optional()
    .describe("Served as this type; default: the upload's Content-Type, the upload's `content_type`, or the source's."),
  filename: fileName
    .optional()
    .describe(
      "Offered as the download's file name (Content-Disposition; any Unicode name, sent as RFC 8187 `filename*`).",
    ),
});

export type ObjectConfig = z.infer<typeof objectConfig>;

export const uploadIdField = z
  .string()
  .regex(/^up_[0-9a-f]{32}$/, "must be an upload_id as returned by POST …/uploads");
export const uploadParam = z.object({ upload_id: uploadIdField });
export const partParam = z.object({
  upload_id: uploadIdField,
  part_number: z
    .string()
    .regex(/^[1-9]\d{0,4}$/, `must be a part number from 1 to ${MAX_PART_NUMBER}`)
    .describe(`1 to ${MAX_PART_NUMBER}.`),
});
export type PartInput = RawBodyInput & { upload_id: string; part_number: string };

/** What the download hands the route (never sent as JSON): the object to stream and its digest for the headers. */
export const storedObject = z.object({ object_key: z.string(), sha256: z.string() });

export const fetchInput = z.object({
  source_url: httpUrl.describe(
    "Where the bytes are: http or https to a public address; redirects are followed (at most 5), each hop " +
      "checked by the egress guard.",
  ),
  headers: headerFields(CONNECTION_HEADERS, "host and connection-level headers are set by the service").describe(
    "Request headers for the source (e.g. an authorization it needs); credential headers are dropped on a " +
      "redirect to another origin. Not stored.",
  ),
  max_bytes: z
    .int()
    .min(1)
    .max(MAX_OBJECT_BYTES)
    .default(MAX_OBJECT_BYTES)
    .describe(`Refuse (413) a source larger than this; default and at most ${MAX_OBJECT_BYTES}.`),
});
export type FetchInput = z.infer<typeof fetchInput>;

export const createUploadInput = z.object({
  content_type: mediaType
    .default("application/octet-stream")
    .describe("The object's type once completed (the resource's content_type wins)."),
});
export type CreateUploadInput = z.infer<typeof createUploadInput>;

export const completeInput = z.object({
  parts: z
    .array(z.strictObject({ part_number: z.int().min(1).max(MAX_PART_NUMBER), etag: z.string().min(1).max(200) }))
    .min(1)
    .max(MAX_PART_NUMBER)
    .optional()
    .describe(
      "The parts to assemble, as S3's CompleteMultipartUpload names them; default: every uploaded part, in " +
        "part-number order.",
    ),
});
export type CompleteInput = z.infer<typeof completeInput>;

export const partsQuery = z.object({ limit: pageLimit(100), cursor: seqCursor });
export type PartsQuery = z.infer<typeof partsQuery>;

export const partView = z
  .object({
    part_number: z.int(),
    size: z.int(),
    etag: z.string().describe("R2's etag of the part; name it when completing with an explicit part list."),
    sha256: z.string().describe("Hex SHA-256 of the part's bytes, computed as they streamed in."),
    uploaded_at: z.string(),
  })
  .openapi("ObjectPart");
export type PartView = z.infer<typeof partView>;

export const partPage = pageOf(partView).openapi("ObjectPartPage");

export const uploadView = z
  .object({
    upload_id: z.string(),
    state: z.enum(["open", "completed", "aborted"]),
    content_type: z.string(),
    created_at: z.string(),
    finished_at: z.string().nullable(),
    parts: z.int().describe("Parts uploaded so far (while open)."),
    bytes: z.int().describe("Their bytes."),
    part_size: z
      .int()
      .nullable()
      .describe(
        "The size every part but the last must have, once a part other than the last is in (R2 needs equal parts).",
      ),
  })
  .openapi("ObjectUpload");
export type UploadView = z.infer<typeof uploadView>;

export const objectView = z
  .object({
    stored: z.boolean(),
    size: z.int().nullable().describe("Bytes."),
    sha256: z
      .string()
      .nullable()
      .describe(
        "Hex SHA-256 of the whole object: computed as it streamed in (PUT, source_url), or by reading it " +
          "back when a multipart upload completes.",
      ),
    content_type: z.string().nullable(),
    stored_at: z.string().nullable(),
    origin: z
      .enum(["upload", "multipart", "fetch", "transfer"])
      .nullable()
      .describe("How the bytes arrived (`transfer`: copied in by a transfers resource)."),
    source_url: z.string().nullable().describe("For `fetch`: the URL that answered, after redirects."),
    content_url: z
      .string()
      .nullable()
      .describe("Signed download link (no credential; Range honoured; valid until the resource's expiry as of now)."),
    open_upload: uploadView.nullable().describe("The multipart upload in progress, if any (one at a time)."),
  })
  .openapi("StoredObject");
export type ObjectView = z.infer<typeof objectView>;
