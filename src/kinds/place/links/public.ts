/**
 * The link's public address. A GET is a click: counted and logged, then redirected to the target
 * or answered with the content it serves (read from that resource at the time: its current upload,
 * Range honoured). Past max_clicks, or once the content is gone, 410. HEAD looks without counting.
 */
import { unwrap } from "../../../http/errors";
import { resourceStub } from "../../../stubs";
import { definePublicFace, type PublicAnswer } from "../../../kind/public-face";
import { prefersHtml } from "../../../kind/public-request";
import { gonePage } from "../../../site/layout";
import { countRefused, exhausted, recordClick } from "./store";
import type { LinkConfig } from "./schema";

/** What the content resource holds now: its key, or null when it ended or holds nothing. */
type Content = { key: string } | null;

export const linksFace = definePublicFace<LinkConfig, Content | undefined>({
  routes: [
    {
      name: "link",
      path: "",
      methods: ["GET"],
      maxBodyBytes: 0,
      answers: ["redirect", "bytes"],
      summary:
        "Follow the link: a redirect to its target, or the content it serves (Range honoured); each GET is " +
        "a click, HEAD is not.",
    },
  ],
  async prepare(ctx, config) {
    if (!config.content_resource_id) return undefined;
    return unwrap(await resourceStub(ctx.env, config.content_resource_id).sharedObject());
  },
  handle(store, config, request, content): PublicAnswer {
    // Answered rather than thrown, so the refusal's count commits.
    const refuse = (detail: string): PublicAnswer => {
      if (request.method === "GET") countRefused(store);
      return { type: "problem", code: "resource_expired", detail };
    };
    if (exhausted(store.sql, config)) return refuse("This link has reached its click limit.");
    if (content === null) return refuse("What this link shared is no longer there.");
    if (request.method === "GET") recordClick(store, request.headers);
    if (content) return { type: "object", key: content.key, headers: { "cache-control": "private, no-cache" } };
    return {
      type: "redirect",
      location: config.target_url!,
      status: config.redirect_status,
      headers: { "cache-control": "private, no-cache", "referrer-policy": "no-referrer" },
    };
  },
  errorAnswer(request, error) {
    if (!prefersHtml(request) || (error.status !== 404 && error.status !== 410)) return null;
    return {
      type: "html",
      status: error.status,
      body: gonePage("Link gone", "This link no longer works", error.detail),
    };
  },
});
