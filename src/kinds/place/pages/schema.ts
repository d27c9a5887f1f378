/** Request and response shapes of pages; the same schemas validate, type and document. */
import { z } from "@hono/zod-openapi";
import { atLeastOneOf, multiLine, singleLine } from "../../../openapi/schemas";

/**
 * The source a page takes (UTF-8). Rendered Markdown escapes `<` five-fold at worst, so the page
 * served stays within what one Durable Object row holds (2 MB).
 */
export const MAX_CONTENT_BYTES = 256 * 1024;

const format = z
  .enum(["markdown", "html"])
  .describe(
    "`markdown` (GitHub-flavoured; raw HTML in it is shown as text, links keep http(s) and mailto only) is " +
      "served in a readable frame; `html` is served as written, sandboxed.",
  );
const content = multiLine(MAX_CONTENT_BYTES).describe(
  `The page's source, at most ${MAX_CONTENT_BYTES} bytes in UTF-8.`,
);
const title = singleLine(200).describe(
  "The page's `<title>` and link-preview title (Open Graph); for HTML it replaces the document's own.",
);
const description = singleLine(500).describe("The page's meta description and link-preview text (Open Graph).");
const scripts = z
  .boolean()
  .describe(
    "HTML only: let the page's own inline scripts run, in a sandbox (an opaque origin: no cookies, storage " +
      "or credentials of this origin). Without it no script runs. Nothing is ever loaded from another origin.",
  );
const indexable = z
  .boolean()
  .describe("Let search engines index the page (otherwise it is served with `X-Robots-Tag: noindex`).");

export const pageCreate = z.object({
  content,
  format: format.default("markdown"),
  title: title.optional(),
  description: description.optional(),
  scripts: scripts.default(false),
  indexable: indexable.default(false),
});
export type PageCreate = z.infer<typeof pageCreate>;
/** What the record shows once the content went to the page's storage (the current page: `GET /v1/pages/{id}`). */
export type PageConfig = Omit<PageCreate, "content">;

export const pageUpdate = atLeastOneOf(
  z.object({
    content: content.optional(),
    format: format.optional(),
    title: title.nullable().optional().describe("A new title; null removes it."),
    description: description.nullable().optional().describe("A new description; null removes it."),
    scripts: scripts.optional(),
    indexable: indexable.optional(),
  }),
  ["content", "format", "title", "description", "scripts", "indexable"],
);
export type PageUpdate = z.infer<typeof pageUpdate>;

export const pageView = z
  .object({
    format: format,
    title: z.string().nullable(),
    description: z.string().nullable(),
    scripts: z.boolean(),
    indexable: z.boolean(),
    bytes: z.int().describe("Size of the source, UTF-8."),
    served_bytes: z.int().describe("Size of the page as served."),
    version: z.int().describe("1 at create, one more with every update."),
    etag: z.string().describe("The served page's ETag: a conditional GET with it answers 304."),
    updated_at: z.string().describe("Also the page's Last-Modified."),
    views: z.int().describe("GETs of the public address (200 or 304); HEAD does not count."),
    last_viewed_at: z.string().nullable(),
  })
  .openapi("Page");
export type PageView = z.infer<typeof pageView>;

export const pageContent = z.object({ format, content: z.string(), version: z.int() }).openapi("PageContent");
