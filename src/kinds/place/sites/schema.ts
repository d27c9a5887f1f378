/** Request and response shapes of sites; the same schemas validate, type and document. */
import { z } from "@hono/zod-openapi";
import { pageLimit, pageOf, seqCursor } from "../../../openapi/schemas";

/** Published limits (Cloudflare Pages' 25 MiB a file as the anchor), checked while the archive streams in. */
export const LIMITS = {
  max_zip_bytes: 50_000_000,
  max_files: 5000,
  max_file_bytes: 25_000_000,
  max_site_bytes: 200_000_000,
  /** Unpacked bytes per archive byte read, once past a megabyte: beyond it the archive is a zip bomb. */
  max_ratio: 100,
  max_path_chars: 512,
} as const;

export const siteCreate = z.object({
  spa_fallback: z
    .boolean()
    .default(false)
    .describe(
      "A single-page app: a path that names no file, asked for by a browser (Accept: text/html) or without " +
        "an extension, gets /index.html (200).",
    ),
  scripts: z
    .boolean()
    .default(false)
    .describe(
      "Let the site's scripts run (inline or its own files), sandboxed in an opaque origin (no cookies or " +
        "storage of this origin). Without it no script runs.",
    ),
  cache_seconds: z
    .int()
    .min(0)
    .max(31_536_000)
    .default(300)
    .describe("`Cache-Control: public, max-age` of files other than HTML (HTML is revalidated on every use)."),
});
export type SiteConfig = z.infer<typeof siteCreate>;

export const deployState = z
  .enum(["live", "previous", "retired"])
  .describe("`live` is served; `previous` is kept for a rollback; `retired` versions' files are deleted.");

export const deployView = z
  .object({
    seq: z.int(),
    deploy_id: z.string(),
    created_at: z.string(),
    files: z.int(),
    bytes: z.int().describe("Unpacked."),
    archive_bytes: z.int(),
    stripped_prefix: z
      .string()
      .nullable()
      .describe("The one folder every file was in (a zipped folder), taken off their paths."),
    state: deployState,
  })
  .openapi("SiteDeploy");
export type DeployView = z.infer<typeof deployView>;

export const siteView = z
  .object({
    live: deployView.nullable(),
    previous: deployView.nullable(),
    deploys: z.int().describe("Deploys so far."),
    spa_fallback: z.boolean(),
    scripts: z.boolean(),
    cache_seconds: z.int(),
  })
  .openapi("Site");
export type SiteView = z.infer<typeof siteView>;

export const siteFile = z
  .object({ path: z.string(), size: z.int(), etag: z.string(), content_type: z.string() })
  .openapi("SiteFile");
export type SiteFile = z.infer<typeof siteFile>;

export const filesInput = z.object({
  limit: pageLimit(100),
  cursor: z.string().max(600).optional().describe("`next_cursor` of the previous page."),
});
export const filesPage = pageOf(siteFile).openapi("SiteFilePage");
export const deploysInput = z.object({
  limit: pageLimit(20),
  cursor: seqCursor.describe("`next_cursor` of the previous page."),
});
export const deploysPage = pageOf(deployView).openapi("SiteDeployPage");
