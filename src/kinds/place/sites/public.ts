/**
 * The site below its public address: `/` is index.html (the bare address redirects there), `dir/`
 * is dir/index.html, `about` is about, else about.html, else (about/index.html existing) a 308 to
 * `about/`. A path that names nothing
 * gets index.html in a single-page app (for a browser, or a path without an extension), else the
 * site's 404.html with status 404, else a 404. Conditional GETs are answered from the file's ETag
 * (304) without touching R2. Served read-only: a hit writes nothing, and every answer names the
 * live version, so the worker gives it again without asking here while that version stays live
 * (resources/public-reuse.ts).
 */
import { httpDate } from "../../../http/conditional";
import { authoredPolicy } from "../../../kind/public-answer";
import { definePublicFace, type PublicAnswer, type PublicRequest } from "../../../kind/public-face";
import { prefersHtml } from "../../../kind/public-request";
import { isHtml } from "./content-types";
import { fileAt, live, type FileRow } from "./store";
import type { SiteConfig } from "./schema";

type Found = { file: FileRow; status: 200 | 404 } | { redirect: string };

function find(
  sql: SqlStorage,
  seq: number,
  config: SiteConfig,
  request: PublicRequest,
  publicUrl: string,
): Found | null {
  const path = request.params.path ?? "";
  const at = (p: string) => fileAt(sql, seq, p);
  // A folder is served at its path with a slash, as its pages' relative links expect: the site's own root too.
  const toFolder = (): Found => ({
    redirect: `${publicUrl}${request.path}/${request.query.length ? `?${new URLSearchParams(request.query)}` : ""}`,
  });
  if (request.path === "") return toFolder();
  if (path === "" || request.path.endsWith("/")) {
    const index = at(path === "" ? "index.html" : `${path}/index.html`);
    if (index) return { file: index, status: 200 };
  } else {
    const file = at(path) ?? at(`${path}.html`);
    if (file) return { file, status: 200 };
    if (at(`${path}/index.html`)) return toFolder();
  }
  const last = path.split("/").pop() ?? "";
  if (config.spa_fallback && (prefersHtml(request) || !last.includes("."))) {
    const index = at("index.html");
    if (index) return { file: index, status: 200 };
  }
  const notFound = at("404.html");
  return notFound && { file: notFound, status: 404 };
}

export const sitesFace = definePublicFace<SiteConfig>({
  routes: [
    {
      name: "root",
      path: "",
      methods: ["GET"],
      maxBodyBytes: 0,
      answers: ["redirect"],
      summary: "A 308 to the site's root, `/p/{public_id}/` (its index.html), where relative links resolve.",
    },
    // What a file's answer depends on besides the path: the SPA fallback asks whether a browser is asking.
    {
      name: "file",
      path: "/{path*}",
      methods: ["GET"],
      maxBodyBytes: 0,
      answers: ["html", "bytes", "redirect"],
      reuse: { vary: ["accept"] },
      summary:
        "A file of the site (ETag and 304; Range honoured), directory indexes, the SPA fallback, the site's 404.html.",
    },
  ],
  handle(store, config, request): PublicAnswer {
    const current = live(store.sql);
    if (!current) return { type: "problem", code: "not_found", detail: "Nothing is deployed here yet." };
    const reuse = { version: current.deploy_id };
    const found = find(store.sql, current.seq, config, request, store.publicUrl ?? "");
    if (!found) return { type: "problem", code: "not_found", detail: "The site has no file at this path.", reuse };
    if ("redirect" in found) return { type: "redirect", location: found.redirect, status: 308, reuse };
    const { file, status } = found;
    const headers: Record<string, string> = {
      etag: file.etag,
      "last-modified": httpDate(current.created_at),
      "cache-control": isHtml(file.content_type) ? "no-cache" : `public, max-age=${config.cache_seconds}`,
      // Public files of a sandboxed (opaque-origin) page: its module scripts and fetches are cross-origin.
      "access-control-allow-origin": "*",
    };
    if (isHtml(file.content_type))
      Object.assign(headers, {
        "content-security-policy": authoredPolicy(config.scripts),
        "x-frame-options": "DENY",
        "referrer-policy": "no-referrer",
      });
    return { type: "object", key: file.key, status, headers, reuse };
  },
});
