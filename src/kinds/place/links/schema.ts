/** Request and response shapes of links; the same schemas validate, type and document. */
import { z } from "@hono/zod-openapi";
import { exactlyOneOf, managementTokenOf, pageLimit, pageOf, seqCursor, httpUrl } from "../../../openapi/schemas";

/** Clicks kept in the log (the newest; the count goes on). */
export const MAX_CLICK_LOG = 10_000;
export const MAX_CLICKS = 1_000_000;

const common = {
  redirect_status: z
    .union([z.literal(302), z.literal(307)])
    .default(302)
    .describe(
      "With `target_url`: 302, or 307 (the method and body kept). Never a permanent redirect: browsers " +
        "would keep following it without asking, uncounted, after the link expired.",
    ),
  max_clicks: z
    .int()
    .min(1)
    .max(MAX_CLICKS)
    .optional()
    .describe("After this many clicks (GETs; HEAD does not count) the link answers 410 until it expires."),
};

export const linkCreate = exactlyOneOf(
  z.object({
    target_url: httpUrl.optional().describe("Where the link redirects (http or https)."),
    content: managementTokenOf(["blobs", "objects"], "must be a blobs or objects resource's management token (zvm_…)")
      .optional()
      .describe(
        "Serve one of your blobs or objects instead: its management token (zvm_…), which proves you hold " +
          "it; only its id is kept. The link serves its current content, with its type and name, Range " +
          "honoured.",
      ),
    ...common,
  }),
  ["target_url", "content"],
);
export type LinkCreate = z.infer<typeof linkCreate>;

/** What the record shows: the content's token replaced by its resource id. */
export type LinkConfig = Omit<LinkCreate, "content"> & { content_resource_id?: string };

export const linkView = z
  .object({
    target_url: z.string().nullable(),
    content_resource_id: z
      .string()
      .nullable()
      .describe("The blobs or objects resource served, when the link serves content."),
    redirect_status: z.int(),
    clicks: z.int().describe("GETs answered (redirected or served)."),
    max_clicks: z.int().nullable(),
    remaining_clicks: z.int().nullable(),
    exhausted: z.boolean().describe("The click limit is reached: the link answers 410."),
    last_click_at: z.string().nullable(),
    refused: z.int().describe("GETs refused after the limit, or while the content was gone."),
  })
  .openapi("Link");
export type LinkView = z.infer<typeof linkView>;

export const click = z
  .object({
    seq: z.int(),
    at: z.string(),
    referrer_host: z.string().nullable().describe("The host of the Referer header, when one was sent."),
    country: z.string().nullable().describe("ISO 3166 country code from Cloudflare's geolocation, when known."),
  })
  .openapi("Click");
export type Click = z.infer<typeof click>;

export const clicksInput = z.object({
  limit: pageLimit(50),
  cursor: seqCursor.describe("`next_cursor` of the previous page."),
});
export const clicksPage = pageOf(click).openapi("ClickPage");
