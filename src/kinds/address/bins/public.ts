/**
 * The bin's address: every method, at the address or any path below it, is captured and answered
 * as configured (after the configured delay, once the capture is stored). Below it, the view link
 * `/_view/{token}` shows the captures to a person and `/_view/{token}/{seq}/body` downloads a raw
 * body; a GET there with any other token is captured like any request.
 */
import { digestsEqual } from "../../../auth/ids";
import { utf8 } from "../../../bytes";
import { definePublicFace, PUBLIC_METHODS, type PublicAnswer, type PublicRequest } from "../../../kind/public-face";
import { queryOf } from "../../../kind/public-request";
import type { PrepareContext } from "../../../kind/kind";
import { discardStaged, keep, stage, type Staged } from "../captures/ingest";
import { counts, rowOf } from "../captures/store";
import { capturesPage } from "./page";
import { captureView, LIMITS, newestPage, responseOf, VIEW_SEGMENT, viewToken } from "./store";
import { MAX_CAPTURE_BYTES, type BinConfig } from "./schema";

const METHODS = PUBLIC_METHODS.filter((m) => m !== "HEAD");
/** Captures on one page of the view. */
const VIEW_PAGE = 50;

type Prepared = { view: true } | { view: false; staged: Staged };

const isView = (ctx: PrepareContext, request: PublicRequest) =>
  request.route.startsWith("view") && digestsEqual(request.params.token ?? "", viewToken(ctx.env, ctx.resourceId));

function body(store: Parameters<typeof captureView>[0], request: PublicRequest): PublicAnswer {
  const row = rowOf(store.sql, Number(request.params.seq), "bin");
  // Served as bytes to download, never as what they claim to be: they are on the API's origin.
  const headers = {
    "content-type": "application/octet-stream",
    "content-disposition": `attachment; filename="capture-${row.seq}.bin"`,
    "content-security-policy": "sandbox",
  };
  if (row.body_key !== null) return { type: "object", key: row.body_key, headers };
  return {
    type: "bytes",
    body: new Uint8Array(row.body ?? new ArrayBuffer(0)),
    contentType: headers["content-type"],
    headers,
  };
}

export const binFace = definePublicFace<BinConfig, Prepared, PublicAnswer>({
  routes: [
    {
      name: "view",
      path: `/${VIEW_SEGMENT}/{token}`,
      methods: ["GET"],
      maxBodyBytes: MAX_CAPTURE_BYTES,
      answers: ["html"],
      summary:
        "With the bin's view token: the captures as a page for a person, newest first (`?before=seq` pages " +
        "back). With any other token: captured.",
    },
    {
      name: "view_body",
      path: `/${VIEW_SEGMENT}/{token}/{seq}/body`,
      methods: ["GET"],
      maxBodyBytes: MAX_CAPTURE_BYTES,
      answers: ["bytes"],
      summary: "With the bin's view token: a capture's raw body, to download. With any other token: captured.",
    },
    {
      name: "capture",
      path: "",
      methods: METHODS,
      anyMethod: true,
      maxBodyBytes: MAX_CAPTURE_BYTES,
      answers: ["json", "bytes"],
      summary:
        "Captured whole (method, path, query, headers, raw body, client address, timing) and answered as " +
        "the bin is configured.",
    },
    {
      name: "capture_below",
      path: "/{path*}",
      methods: METHODS,
      anyMethod: true,
      maxBodyBytes: MAX_CAPTURE_BYTES,
      answers: ["json", "bytes"],
      summary: "The same, for any path below the address (kept in the capture's `path`).",
    },
  ],
  async prepare(ctx, _config, request) {
    if (isView(ctx, request) && (request.route === "view" || /^\d{1,15}$/.test(request.params.seq ?? "")))
      return { view: true };
    return { view: false, staged: await stage(ctx, LIMITS, request) };
  },
  discard: (ctx, _config, prepared) => discardStaged(ctx, "staged" in prepared ? prepared.staged : undefined),
  handle(store, _config, request, prepared) {
    if (prepared.view && request.route === "view_body") return body(store, request);
    if (prepared.view) {
      const before = /^\d{1,15}$/.test(queryOf(request, "before") ?? "") ? Number(queryOf(request, "before")) : null;
      const { rows, next } = newestPage(store, before, VIEW_PAGE);
      const here = `${store.publicUrl}${request.path.replace(/\/$/, "")}`;
      const html = capturesPage(
        rows.map(captureView(store)),
        counts(store.sql).items,
        next === null ? null : `${here}?before=${next}`,
        here,
      );
      return { type: "html", body: html };
    }
    const seq = keep(store, LIMITS, request, prepared.staged);
    const response = responseOf(store.sql);
    const headers = { ...response.headers, "content-security-policy": "sandbox" };
    const answer: PublicAnswer =
      response.body === null
        ? { type: "json", status: response.status, headers, body: { received: true, seq } }
        : {
            type: "bytes",
            status: response.status,
            headers,
            body: utf8(response.body),
            contentType: response.content_type,
          };
    // The worker holds the answer back, not the object (whose timers are shared by all its calls).
    return { ...answer, delayMs: response.delay_ms };
  },
});
