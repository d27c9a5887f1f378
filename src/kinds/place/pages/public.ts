/**
 * The page's public address: GET serves it (counted as a view), HEAD only looks. It is revalidated
 * on every use (`no-cache`), so an update shows at once; a conditional GET with the current ETag or
 * Last-Modified answers 304 without the body (and is still a view).
 */
import { httpDate, notModified } from "../../../http/conditional";
import { definePublicFace, type PublicAnswer } from "../../../kind/public-face";
import { prefersHtml } from "../../../kind/public-request";
import { gonePage } from "../../../site/layout";
import { countView, row } from "./store";
import type { PageConfig } from "./schema";

export const pagesFace = definePublicFace<PageConfig>({
  routes: [
    {
      name: "page",
      path: "",
      methods: ["GET"],
      maxBodyBytes: 0,
      answers: ["html"],
      summary: "The page (ETag, Last-Modified, 304 on a conditional GET); each GET is a view, HEAD is not.",
    },
  ],
  handle(store, _config, request): PublicAnswer {
    const page = row(store.sql);
    if (request.method === "GET") countView(store);
    const headers: Record<string, string> = {
      etag: page.etag,
      "last-modified": httpDate(page.updated_at),
      "cache-control": "no-cache",
    };
    if (page.indexable !== 1) headers["x-robots-tag"] = "noindex";
    if (notModified(request.headers, page.etag, page.updated_at)) return { type: "empty", status: 304, headers };
    return {
      type: "html",
      body: page.html,
      headers,
      authored: { scripts: page.format === "html" && page.scripts === 1 },
    };
  },
  errorAnswer(request, error) {
    if (!prefersHtml(request) || (error.status !== 404 && error.status !== 410)) return null;
    return {
      type: "html",
      status: error.status,
      body: gonePage("Page gone", "This page is no longer here", error.detail),
    };
  },
});
