/**
 * The public-face contract (docs/api.md#public-addresses): what a kind declares to answer at its public
 * address `/p/{public_id}`, what a request there looks like to it, and the answers it may
 * give. One contract for every kind with a face: a dead-man switch's pings, a debouncer's
 * events, a one-time secret's page, a blob's link, and the inboxes, bins, forms and sites
 * to come.
 *
 * A face is a table of routes (method, path pattern, body limit), so 404, 405 with `Allow`,
 * 413 and the OpenAPI entries come from one place and junk traffic is refused at the edge,
 * before any Durable Object is woken. A request that matches runs in the resource's object
 * in three steps, each handing its typed result to the next:
 *
 *   prepare (async, read-only: checking a passphrase)  → Prepared
 *   handle  (synchronous, in the transaction, like an operation; may send, drop, charge nothing) → Handled
 *   finish  (async, after the commit: decrypting what handle released)  → PublicAnswer
 *
 * Without `finish`, `handle` answers directly.
 */
import type { Json } from "../json";
import type { EngineStore, PrepareContext } from "./engine";
import type { ErrorCode } from "../http/error-codes";

export const PUBLIC_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
export type PublicMethod = (typeof PUBLIC_METHODS)[number];
/**
 * The method of a request that reached a face: one of PUBLIC_METHODS, or on a route that takes
 * `anyMethod`, whatever else the runtime passed on (WebDAV's PROPFIND, MKCOL, REPORT, SEARCH, a
 * CDN's PURGE …), upper case as sent.
 */
export type RequestMethod = PublicMethod | (string & {});

/** Bodies a route takes when it does not say: small events and form posts. */
export const DEFAULT_PUBLIC_BODY_BYTES = 64 * 1024;

/**
 * Bodies up to this size reach the object inline. A larger one (a route may take up to
 * MAX_PUBLIC_BODY_BYTES) goes to R2 first, below the resource's prefix, and the object gets its
 * key, size and SHA-256: bytes never cross into the object that it has no use for.
 */
export const INLINE_PUBLIC_BODY_BYTES = 128 * 1024;

/** The most any route may take (inboxes' and bins' 10 MiB). */
export const MAX_PUBLIC_BODY_BYTES = 10 * 1024 * 1024;

/**
 * A body stored in R2 on its way in. The kind owns the object once `handle` commits (it keeps
 * the key, or drops it with store.dropObjects); when the call answers an error the router deletes
 * it, so a face that keeps stored bodies must not fail in `finish`. One whose worker died between
 * storing and calling is deleted with the resource's prefix at its end.
 */
export interface StoredPublicBody {
  key: string;
  size: number;
  /** Hex SHA-256 of the bytes, so a kind can check a signature's digest without reading them. */
  sha256: string;
}

export interface PublicRoute {
  /** What the route is called, in `request.route` (e.g. "ping", "exit_code"). */
  name: string;
  /**
   * Below the address: "" for the address itself, else segments starting with "/"; a segment
   * `{name}` matches any one segment and reaches the kind in `request.params`; a last segment
   * `{name*}` matches the rest of the path, none or many segments (`a/b%20c` reaches the kind as
   * `a/b c`). A trailing slash on the request is tolerated (and kept in `request.path`).
   */
  path: string;
  /** HEAD comes with GET. */
  methods: PublicMethod[];
  /**
   * Every other method the runtime passes on is taken here too (a request bin captures PROPFIND
   * as webhook.site does; a reverse proxy passes it on). Without it, such a method is 405 with
   * `Allow`, like any method the route does not list.
   */
  anyMethod?: boolean;
  summary: string;
  /**
   * The largest body the route takes (default DEFAULT_PUBLIC_BODY_BYTES, at most MAX_PUBLIC_BODY_BYTES; 0 refuses any):
   * beyond it 413, nothing stored.
   */
  maxBodyBytes?: number;
  /**
   * The body is not read here: it streams on to the upstream an `upstream` answer names (a
   * reverse proxy), so its bytes never pass through the object. The kind sees `body: null` and
   * `bodyUnread: true`; a `read_body` answer has the router read it after all (a stable address
   * with no target keeps the request) and ask again.
   */
  streamsBody?: boolean;
  /** What the answer is, for the OpenAPI document (default: JSON). */
  answers?: ("json" | "text" | "html" | "bytes" | "redirect" | "upstream")[];
  /**
   * GETs here write nothing, and an answer that carries `reuse` depends only on the method, the
   * path, the query and these request headers (lower case): the worker may give it again without
   * waking the object (public-reuse.ts).
   */
  reuse?: { vary: string[] };
}

/** A request to a public address, as the kind sees it. */
export interface PublicRequest {
  method: RequestMethod;
  /** The route that matched, and the values of its `{name}` segments. */
  route: string;
  params: Record<string, string>;
  /**
   * Below `/p/{public_id}`, exactly as sent (percent-encoding and a trailing slash kept): "" for the address itself.
   */
  path: string;
  /** The query, in order, repeated keys kept. */
  query: [string, string][];
  /**
   * The query exactly as sent, without its `?` ("" for none): what a proxy passes on byte for byte
   * (`%20` stays `%20`, a bare `flag` stays bare), since a receiver may check a signature over the URL.
   */
  rawQuery: string;
  /** Header names in lower case; hop-by-hop headers dropped; repeated ones joined with ", ". */
  headers: Record<string, string>;
  /** The client's address (CF-Connecting-IP); null when unknown (local development). */
  clientIp: string | null;
  /** Unix ms when the worker received it. */
  receivedAt: number;
  /**
   * The body's exact bytes (up to INLINE_PUBLIC_BODY_BYTES), or where R2 holds a larger one (only
   * on routes taking more); null when the request has none (or an empty one).
   */
  body: Uint8Array | StoredPublicBody | null;
  /**
   * On a route that `streamsBody`: the body was not read (whatever was sent), until a `read_body` answer asks for it.
   */
  bodyUnread: boolean;
}

interface Answered {
  status?: number;
  headers?: Record<string, string>;
  /**
   * Held back this long by the worker before it goes out (a bin's configured delay): the object is not kept waiting.
   */
  delayMs?: number;
  /**
   * On a route that declares `reuse`: this answer stays right for the same request while the
   * resource's content is at `version` (a site's live deploy). The object adds `until`, the
   * resource's expiry, past which nothing is reused.
   */
  reuse?: { version: string; until?: number };
}

/**
 * What a public address answers. HTML goes out with a strict Content-Security-Policy (nothing from
 * other origins; inline script and style only with the nonce the worker puts in `{{nonce}}`),
 * `X-Frame-Options: DENY` and `nosniff`: these pages live on the API's own origin.
 */
export type PublicAnswer =
  | (Answered & { type: "json"; body: Json })
  | (Answered & { type: "text"; body: string })
  /**
   * `authored`: HTML the resource's owner wrote (a page, a site's file), served as written rather than
   * with a nonce filled in, under authoredPolicy (public-answer.ts): sandboxed, scripts only when opted in.
   */
  | (Answered & { type: "html"; body: string; authored?: { scripts: boolean } })
  | (Answered & { type: "bytes"; body: Uint8Array; contentType: string })
  /**
   * A stored R2 object (below the resource's prefix), Range honoured. With an `etag` header (and a
   * `last-modified`), a conditional GET they satisfy is answered 304 without reading R2.
   */
  | (Answered & { type: "object"; key: string })
  | (Answered & { type: "redirect"; location: string; status?: 301 | 302 | 303 | 307 | 308 })
  | (Answered & { type: "empty" })
  /**
   * A refusal as problem+json, answered after `handle` committed what it did (a transformer logs the
   * request it refuses): unlike a thrown error, which rolls the transaction back. Plain data, as it
   * crosses from the object to the worker.
   */
  | (Answered & { type: "problem"; code: ErrorCode; detail: string })
  /**
   * A proxied upstream, fetched by the worker once the object has decided (the worker-side step:
   * bytes never pass through the object). The request's body streams to it when the route
   * `streamsBody`; its answer streams back with its status, without hop-by-hop headers or
   * Set-Cookie, and sandboxed (it is served from the API's origin). Redirects come back as they are.
   * `status` and `headers` here are not used; `headers` of the upstream request are `requestHeaders`.
   * `redact`: values (injected secrets) masked wherever they appear in the answer's headers and body,
   * as given, percent-encoded or JSON-escaped. `report`: the face's `settled` hears the upstream's status
   * and timing under this name (a request log).
   */
  | (Answered & {
      type: "upstream";
      url: string;
      method?: PublicMethod;
      requestHeaders?: Record<string, string>;
      redact?: string[];
      report?: string;
    })
  /** Only for a request with `bodyUnread`: read its body (up to the route's limit) and ask again with it. */
  | (Answered & { type: "read_body" });

/**
 * Thrown by a face's `handle` when what its `prepare` read has changed since (a fanout destination
 * added between the two steps): the transaction rolls back, the prepared work is discarded, and the
 * object runs both steps again (PREPARE_ATTEMPTS in all).
 */
export class PreparedStale extends Error {}

/** How many times a request is prepared before a stale preparation is a 409. */
export const PREPARE_ATTEMPTS = 3;

export interface PublicFace<Config = unknown, Prepared = undefined, Handled = PublicAnswer> {
  /** Whether a resource with this config has an address at all (default: always). */
  enabled?(config: Config): boolean;
  routes: PublicRoute[];
  prepare?(ctx: PrepareContext, config: Config, request: PublicRequest): Promise<Prepared>;
  handle(store: EngineStore, config: Config, request: PublicRequest, prepared: Prepared): Handled;
  finish?(ctx: PrepareContext, config: Config, request: PublicRequest, handled: Handled): Promise<PublicAnswer>;
  /**
   * Told, in a transaction of its own, how an `upstream` answer that named a `report` went: the
   * upstream's status (502 when it could not be reached) and the time to its answer. After the
   * answer has gone out, so it may be lost (a request log entry then keeps no status).
   */
  settled?(store: EngineStore, config: Config, report: string, outcome: { status: number; durationMs: number }): void;
  /**
   * Undoes what `prepare` left behind (an R2 object it wrote) when the request then fails (the resource full, a
   * refusal).
   */
  discard?(ctx: PrepareContext, config: Config, prepared: Prepared): Promise<void>;
  /**
   * For faces people open in a browser: the answer instead of problem+json for an error at this
   * address (an unknown or used-up address, a refusal), or null to keep problem+json. Runs in the
   * worker, for errors of the router as well as the object's.
   */
  errorAnswer?(
    request: Pick<PublicRequest, "method" | "headers">,
    error: { status: number; detail: string },
  ): PublicAnswer | null;
}

/** A face with its step types erased, as a kind definition holds it. */
export type AnyPublicFace<Config = unknown> = PublicFace<Config, unknown, unknown>;

/** Keeps a face's types while declaring it: `prepare`'s result types `handle`, `handle`'s types `finish`. */
export function definePublicFace<Config, Prepared = undefined, Handled = PublicAnswer>(
  face: PublicFace<Config, Prepared, Handled>,
): AnyPublicFace<Config> {
  return face as unknown as AnyPublicFace<Config>;
}
