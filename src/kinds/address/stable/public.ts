/**
 * The stable address: any method, at the address or below it. With a target, a request is
 * proxied there (streaming both ways, never through the object) or redirected with a 307. With
 * none, the router is asked for the body after all (`read_body`) and the request is buffered,
 * answered 202, and replayed once a target is set.
 */
import { AppError } from "../../../http/errors";
import { utf8Length } from "../../../bytes";
import { PUBLIC_METHODS, definePublicFace, type PublicAnswer } from "../../../kind/public-face";
import { discardForward, forwardBody, forwardedHeaders, type ForwardBody } from "../forwarding";
import { buffer, countPassed, targetFor, targetOf } from "./store";
import { MAX_BODY_BYTES, type StableConfig } from "./schema";

const ROUTE = {
  methods: [...PUBLIC_METHODS],
  maxBodyBytes: MAX_BODY_BYTES,
  streamsBody: true,
  answers: ["upstream" as const, "redirect" as const, "json" as const],
};

/** The pipeline sends these; HEAD and OPTIONS ask about a target that is not there yet. */
const REPLAYABLE = new Set(["GET", "POST", "PUT", "PATCH", "DELETE"]);

export const stableFace = definePublicFace<StableConfig, ForwardBody>({
  routes: [
    {
      name: "forward",
      path: "",
      ...ROUTE,
      summary:
        "Proxied to the target (or redirected with 307); without a target, buffered (202) and replayed in " +
        "order once one is set.",
    },
    {
      name: "forward_below",
      path: "/{path*}",
      ...ROUTE,
      summary: "The same for any path below the address (appended to the target's unless forward_path is false).",
    },
  ],
  // Only a request being buffered has its body read; a small binary one is stored for the replay here.
  prepare: async (ctx, _config, request) => (request.bodyUnread ? null : forwardBody(ctx, request)),
  discard: (ctx, _config, body) => discardForward(ctx, body),
  handle(store, _config, request, body): PublicAnswer {
    const target = targetOf(store.sql);
    // As sent, byte for byte: proxied, redirected, or kept for the replay.
    const query = request.rawQuery;
    if (target.target_url && request.bodyUnread) {
      const url = targetFor({ ...target, target_url: target.target_url }, request.path, query);
      if (target.mode === "redirect") {
        countPassed(store.sql, "redirected");
        return { type: "redirect", status: 307, location: url };
      }
      countPassed(store.sql, "proxied");
      const headers = forwardedHeaders(request.headers);
      if (request.clientIp) headers["x-forwarded-for"] = request.clientIp;
      return { type: "upstream", url, requestHeaders: headers };
    }
    if (!REPLAYABLE.has(request.method))
      throw new AppError("conflict", `No target is set yet; ${request.method} requests are not buffered.`);
    // No target: keep the request. (One whose body was read as a target was being set is kept too, and replayed at
    // once.)
    if (request.bodyUnread) return { type: "read_body" };
    const seq = buffer(store, {
      receivedAt: request.receivedAt,
      method: request.method,
      path: request.path,
      query,
      headers: forwardedHeaders(request.headers),
      body: body === null ? null : "text" in body ? body : { key: body.stored.key },
      size: body === null ? 0 : "text" in body ? utf8Length(body.text) : body.stored.size,
    });
    return { type: "json", status: 202, body: { buffered: true, seq } };
  },
});
