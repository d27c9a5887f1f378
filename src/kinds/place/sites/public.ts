/**
 * The site below its public address: `/` is index.html (the bare address redirects there), `dir/`
 * is dir/index.html, `about` is about, else about.html, else (about/index.html existing) a 308 to
 * `about/`. A path that names nothing
 * gets index.html in a single-page app (for a browser, or a path without an extension), else the
 * site's 404.html with status 404, else a 404. Conditional GETs are answered here from the file
 * table (304), without touching R2. Served read-only: a hit writes nothing.
 */
import { notModified } from "../../../http/conditional";
import { AppError } from "../../../http/errors";
import { authoredPolicy } from "../../../resources/public-answer";
import { definePublicFace, prefersHtml, type PublicAnswer, type PublicRequest } from "../../../resources/public-face";
import { isHtml } from "./content-types";
import { fileAt, live, type FileRow } from "./store";
import type { SiteConfig } from "./schema";

type Found = { file: FileRow; status: 200 | 404 } | { redirect: string };

function find(sql: SqlStorage, seq: number, config: SiteConfig, request: PublicRequest, publicUrl: string): Found | null {
  const path = request.params.path ?? "";
  const at = (p: string) => fileAt(sql, seq, p);
  // A folder is served at its path with a slash, as its pages' relative links expect: the site's own root too.
  const toFolder = (): Found => ({ redirect: `${publicUrl}${request.path}/${request.query.length ? `?${new URLSearchParams(request.query)}` : ""}` });
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
    { name: "root", path: "", methods: ["GET"], maxBodyBytes: 0, answers: ["redirect"], summary: "A 308 to the site's root, `/p/{public_id}/` (its index.html), where relative links resolve." },
    { name: "file", path: "/{path*}", methods: ["GET"], maxBodyBytes: 0, answers: ["html", "bytes", "redirect"], summary: "A file of the site (ETag and 304; Range honoured), directory indexes, the SPA fallback, the site's 404.html." },
  ],
  handle(store, config, request): PublicAnswer {
    const current = live(store.sql);
    if (!current) throw new AppError("not_found", "Nothing is deployed here yet.");
    const found = find(store.sql, current.seq, config, request, store.publicUrl ?? "");
    if (!found) throw new AppError("not_found", "The site has no file at this path.");
    if ("redirect" in found) return { type: "redirect", location: found.redirect, status: 308 };
    const { file, status } = found;
    const headers: Record<string, string> = {
      etag: file.etag,
      "cache-control": isHtml(file.content_type) ? "no-cache" : `public, max-age=${config.cache_seconds}`,
      // Public files of a sandboxed (opaque-origin) page: its module scripts and fetches are cross-origin.
      "access-control-allow-origin": "*",
    };
    if (isHtml(file.content_type)) Object.assign(headers, { "content-security-policy": authoredPolicy(config.scripts), "x-frame-options": "DENY", "referrer-policy": "no-referrer" });
    if (status === 200 && notModified(request.headers, file.etag, current.created_at)) return { type: "empty", status: 304, headers };
    return { type: "object", key: file.key, status, headers };
  },
});
