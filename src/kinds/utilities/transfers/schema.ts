/** Request and response shapes of transfers; the same schemas validate, type and document. */
import { z } from "@hono/zod-openapi";
import { CONNECTION_HEADERS, headerFields } from "../../../http/header-fields";
import { httpUrl, managementTokenOf, pageLimit, pageOf, seqCursor, singleLine } from "../../../openapi/schemas";

/** The largest transfer: S3's and R2's largest object (10,000 parts). */
export const MAX_TRANSFER_BYTES = 5 * 1024 ** 4;
/**
 * Parts are this size (S3 and R2 need ≥ 5 MiB for all but the last), larger when 10,000 would not hold the object.
 */
export const PART_BYTES = 16 * 1024 * 1024;
export const MAX_PARTS = 10_000;
/** Transfers a resource keeps (finished ones can be deleted). */
export const MAX_TRANSFERS = 1000;

const manageToken = managementTokenOf(["objects", "blobs"], "must be a management token (zvm_…)");

const s3Key = z
  .string()
  .min(1)
  .max(1024)
  .regex(/^[^\u0000-\u001f\u007f]+$/, "must be an S3 key: 1–1,024 characters, no control characters");

export const urlEndpoint = z.object({
  type: z.literal("url"),
  url: httpUrl.describe(
    "As a source: read with GET (in ranges when the server offers them). As a destination: the whole body " +
      "PUT to it in one request.",
  ),
  headers: headerFields(CONNECTION_HEADERS, "Host, framing and Proxy-* headers are set by the service.").describe(
    "Headers sent (an authorization the server needs): kept sealed, shown back by name only.",
  ),
});

export const s3Endpoint = z.object({
  type: z.literal("s3"),
  endpoint: httpUrl.describe(
    "The service's base URL: `https://s3.us-east-1.amazonaws.com`, " +
      "`https://<account>.r2.cloudflarestorage.com`, a MinIO's …",
  ),
  region: z
    .string()
    .regex(/^[a-z0-9-]{1,32}$/, "must be a region name such as us-east-1 or auto")
    .default("us-east-1"),
  bucket: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, "must be an S3 bucket name"),
  key: s3Key,
  path_style: z
    .boolean()
    .default(true)
    .describe(
      "Address the bucket in the path (`endpoint/bucket/key`, what R2 and MinIO expect); false for " +
        "`bucket.endpoint/key`.",
    ),
  access_key_id: z
    .string()
    .min(1)
    .max(128)
    .regex(/^[\x21-\x7e]+$/, "must be printable ASCII without spaces"),
  secret_access_key: z
    .string()
    .min(1)
    .max(256)
    .regex(/^[\x21-\x7e]+$/, "must be printable ASCII without spaces")
    .describe("Kept sealed; never shown back."),
  session_token: z
    .string()
    .max(4096)
    .regex(/^[\x21-\x7e]+$/, "must be printable ASCII without spaces")
    .optional(),
});

export const objectEndpoint = z.object({
  type: z.literal("object"),
  management_token: manageToken.describe(
    "One of your own resources, by its management token (proof you hold it; only its id is kept): as a " +
      "source a blobs or objects resource, as a destination an objects resource, whose content the transfer " +
      "replaces when it completes.",
  ),
});

export const endpoint = z.discriminatedUnion("type", [urlEndpoint, s3Endpoint, objectEndpoint]);
export type Endpoint = z.infer<typeof endpoint>;

export const transfersCreate = z.object({});
export type TransfersConfig = z.infer<typeof transfersCreate>;

export const startInput = z.object({
  source: endpoint,
  destination: endpoint,
  content_type: z
    .string()
    .max(255)
    .regex(/^[\x21-\x7e]+\/[\x20-\x7e]+$/, "must be a media type")
    .optional()
    .describe("The type stored at the destination; default: the source's."),
  label: singleLine(200).optional(),
});
export type StartInput = z.infer<typeof startInput>;

const endpointView = z
  .object({
    type: z.enum(["url", "s3", "object"]),
    url: z.string().optional(),
    header_names: z.array(z.string()).optional(),
    endpoint: z.string().optional(),
    region: z.string().optional(),
    bucket: z.string().optional(),
    key: z.string().optional(),
    access_key_id: z.string().optional(),
    resource_id: z.string().optional(),
  })
  .describe(
    "An endpoint as given, without its secrets (headers by name, the secret key and session token left " +
      "out, a management token as its resource's id).",
  );

export const STATUSES = ["running", "completed", "failed", "cancelled"] as const;

export const transferView = z
  .object({
    transfer_id: z.string(),
    label: z.string().nullable(),
    status: z
      .enum(STATUSES)
      .describe(
        "running → completed; or failed (resumable: POST …/resume goes on from the last part moved) or cancelled.",
      ),
    source: endpointView,
    destination: endpointView,
    content_type: z.string().nullable(),
    bytes_total: z.int(),
    bytes_moved: z.int(),
    percent: z.number(),
    rate_bytes_per_second: z.int().nullable().describe("Over the current (or last) run."),
    part_bytes: z.int(),
    parts_total: z.int(),
    parts_done: z.int(),
    sha256: z
      .string()
      .nullable()
      .describe(
        "Hex SHA-256 of every byte moved, computed on the way (or, when the process moving it was replaced " +
          "mid-transfer, from what the destination holds); set once completed.",
      ),
    source_etag: z
      .string()
      .nullable()
      .describe("The source's ETag when it gave one (for S3, its MD5 or multipart ETag)."),
    destination_etag: z
      .string()
      .nullable()
      .describe("The ETag the destination reported for what it stored (S3: the multipart ETag; objects: R2's)."),
    attempts: z.int().describe("Runs started: 1, plus one per resume."),
    error: z.string().nullable().describe("Why it failed: bytes_moved says how much had been moved."),
    created_at: z.string(),
    updated_at: z.string(),
    finished_at: z.string().nullable(),
  })
  .openapi("Transfer");
export type TransferView = z.infer<typeof transferView>;

export const transferIdParam = z.object({
  transfer_id: z
    .string()
    .regex(/^trf_[0-9A-Za-z]{22}$/)
    .openapi({ example: "trf_0123456789abcdefABCDEF" }),
});
export const transfersInput = z.object({
  limit: pageLimit(20),
  cursor: seqCursor.describe("`next_cursor` of the previous page."),
});
export const transfersPage = pageOf(transferView).openapi("TransferPage");
