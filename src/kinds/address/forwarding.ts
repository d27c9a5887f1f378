/**
 * What the address kinds that pass a request on (fanout, transformers) send of it: its end-to-end
 * headers without those that name our edge or the connection, and its body as the delivery
 * pipeline carries one (text inline, anything large or binary as an R2 object every destination's
 * delivery shares).
 */
import type { PrepareContext } from "../../kind/kind";
import type { PublicRequest, StoredPublicBody } from "../../kind/public-face";
import { MAX_INLINE_BODY_BYTES } from "../../delivery/outbound";
import { deeperThan, MAX_JSON_DEPTH } from "../../json";

/**
 * Not passed on: framing and routing (set by the fetch), our edge's (cf-*, forwarding chains,
 * the client's address), cookies for our origin, and webhook-* (the delivery is signed anew with
 * the resource's secret). A provider's own signature header (Stripe-Signature, X-Hub-Signature-256)
 * is kept, so a destination can still check it.
 */
const NOT_FORWARDED = new RegExp(
  "^(host|content-length|transfer-encoding|connection|keep-alive|upgrade|te|trailer|proxy-.*|" +
    "cookie|cf-.*|cdn-loop|x-forwarded-.*|x-real-ip|true-client-ip|forwarded|" +
    "webhook-id|webhook-timestamp|webhook-signature)$",
  "i",
);

export function forwardedHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !NOT_FORWARDED.test(name)));
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The body as a delivery carries it: text up to MAX_INLINE_BODY_BYTES, else an R2 object (null: no body). */
export type ForwardBody = { text: string } | { stored: StoredPublicBody; mine: boolean } | null;

/**
 * The request's body for the pipeline. A body the router stored already is used as it is; a small
 * one that is binary or too large to ride inline is stored here (`mine`: the kind deletes it when
 * nothing ends up sending it).
 */
export async function forwardBody(ctx: PrepareContext, request: PublicRequest): Promise<ForwardBody> {
  const body = request.body;
  if (body === null || (body instanceof Uint8Array && body.length === 0)) return null;
  if (!(body instanceof Uint8Array)) return { stored: body, mine: false };
  if (body.length <= MAX_INLINE_BODY_BYTES) {
    try {
      return { text: strictUtf8.decode(body) };
    } catch {
      /* binary: stored below */
    }
  }
  const key = `${ctx.resourceId}/forward/${crypto.randomUUID()}`;
  await ctx.env.BUCKET.put(key, body, { customMetadata: { expires_at: String(ctx.expiresAt) } });
  return { stored: { key, size: body.length, sha256: "" }, mine: true };
}

/**
 * Where a request below an address goes on a target that stands for the address (a stable address,
 * a proxy): the path below the address appended to the target's path, and the query as sent
 * (`rawQuery`, byte for byte, as nginx's proxy_pass passes it) after the target's own, which is kept
 * as written too. Never through URLSearchParams, which would re-encode both (`%20` as `+`, `flag` as `flag=`).
 */
export function belowTarget(target: string, path: string, rawQuery: string): string {
  const url = new URL(target);
  url.hash = "";
  if (path) url.pathname = url.pathname.replace(/\/$/, "") + path;
  const href = url.href;
  if (!rawQuery) return href;
  return href.endsWith("?") ? `${href}${rawQuery}` : `${href}${url.search ? "&" : "?"}${rawQuery}`;
}

/** `rawQuery` without the parameters named in `names` (compared as decoded), the rest as sent. */
export function withoutParams(rawQuery: string, names: Set<string>): string {
  return rawQuery
    .split("&")
    .filter((pair) => pair !== "" && !names.has(formDecoded(pair.split("=", 1)[0]!)))
    .join("&");
}

function formDecoded(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "));
  } catch {
    return text;
  }
}

/** Deletes a body forwardBody stored itself, for a request that failed after it (the router deletes its own). */
export async function discardForward(ctx: PrepareContext, body: ForwardBody): Promise<void> {
  if (body && "stored" in body && body.mine) await ctx.env.BUCKET.delete(body.stored.key);
}

/**
 * The body's JSON, when it is JSON small and shallow enough to read (filters and transformations look into it), else
 * undefined.
 */
export function jsonOf(request: PublicRequest, maxBytes: number): unknown {
  const body = request.body;
  if (!(body instanceof Uint8Array) || body.length === 0 || body.length > maxBytes) return undefined;
  try {
    const value: unknown = JSON.parse(strictUtf8.decode(body));
    return deeperThan(value, MAX_JSON_DEPTH) ? undefined : value;
  } catch {
    return undefined;
  }
}
