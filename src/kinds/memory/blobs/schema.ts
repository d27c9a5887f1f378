/** Request and response shapes of blobs; the same schemas validate, type and document. */
import { z } from "@hono/zod-openapi";
import { fileName, mediaType } from "../../../http/header-fields";

/** seed-spec: 100 MB (decimal, as the spec writes MiB where it means binary units). */
export const MAX_BLOB_BYTES = 100_000_000;

export const blobConfig = z.object({
  content_type: mediaType.optional().describe("Served as this type; default: the upload's Content-Type."),
  filename: fileName
    .optional()
    .describe(
      "Offered as the download's file name (Content-Disposition; any Unicode name, sent as RFC 8187 `filename*`).",
    ),
  public: z
    .boolean()
    .default(false)
    .describe("Give the blob a public download link (`urls.public`), no credential needed."),
  max_downloads: z
    .int()
    .min(1)
    .max(100_000)
    .optional()
    .describe("With `public`: the link stops working after this many downloads (each GET counts; HEAD does not)."),
});

export type BlobConfig = z.infer<typeof blobConfig>;

/** What a servesObject operation hands the route (never sent as JSON). */
export const storedObject = z.object({ object_key: z.string() });

export const blobView = z
  .object({
    uploaded: z.boolean(),
    size: z.int().nullable().describe("Bytes."),
    sha256: z.string().nullable().describe("Hex SHA-256 of the bytes, computed while they streamed in."),
    content_type: z.string().nullable(),
    uploaded_at: z.string().nullable(),
    public_downloads: z.int().describe("Downloads through the public link so far."),
    max_downloads: z.int().nullable(),
    content_url: z
      .string()
      .nullable()
      .describe("Signed download link (no credential; valid until the resource's expiry as of now)."),
  })
  .openapi("Blob");

export type BlobView = z.infer<typeof blobView>;
