/**
 * The proxy's address: any method, at the address or below it. A caller with the credential, or
 * from an allowed range, within the rate limit, is passed to the upstream (the body streaming
 * through the worker, never the object) with the sealed headers and query parameters added and
 * masked in the answer; anyone else gets 401 (or 429) and reaches nothing. Every request is logged;
 * the upstream's status and timing complete the entry once the worker has them (`settled`).
 */
import { digestsEqual } from "../../../auth/ids";
import { unseal } from "../../../auth/sealing";
import { sha256Hex } from "../../../bytes";
import { inRange, parseCidr, parseIp } from "../../../http/cidr";
import { definePublicFace, PUBLIC_METHODS, type PublicAnswer, type PublicRequest } from "../../../kind/public-face";
import { belowTarget, forwardedHeaders, withoutParams } from "../forwarding";
import { access, logOutcome, logRequest, overLimit } from "./store";
import { MAX_BODY_BYTES, type ProxyCreate } from "./schema";

/** What the face reads of the config: the same in the create body and in the record's form. */
type Access = Pick<ProxyCreate, "upstream_url" | "auth" | "allow_ips" | "rate_limit_per_minute">;

const ROUTE = {
  methods: [...PUBLIC_METHODS],
  maxBodyBytes: MAX_BODY_BYTES,
  streamsBody: true,
  answers: ["upstream" as const],
};

function fromAllowedRange(config: Access, ip: string | null): boolean {
  const address = ip === null ? null : parseIp(ip);
  return address !== null && config.allow_ips.some((r) => inRange(parseCidr(r)!, address));
}

/** How the caller gets in, if it does. */
function admitted(config: Access, hash: string | null, request: PublicRequest): "credential" | "ip" | null {
  const shown = request.headers["authorization"];
  if (config.auth !== "none" && hash && shown && digestsEqual(sha256Hex(shown), hash)) return "credential";
  return fromAllowedRange(config, request.clientIp) ? "ip" : null;
}

/**
 * The upstream URL: its path and the path below the address; the caller's query as sent, less any
 * parameter the injected ones replace, which follow it.
 */
function upstreamUrl(config: Access, request: PublicRequest, query: Record<string, string>): string {
  const injected = Object.entries(query).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`);
  const kept = withoutParams(request.rawQuery, new Set(Object.keys(query)));
  return belowTarget(config.upstream_url, request.path, [kept, ...injected].filter(Boolean).join("&"));
}

const pathOf = (request: PublicRequest) => (request.rawQuery ? `${request.path}?${request.rawQuery}` : request.path);

export const proxyFace = definePublicFace<Access>({
  routes: [
    {
      name: "proxy",
      path: "",
      ...ROUTE,
      summary:
        "Passed to the upstream for a caller with the proxy's credential or from an allowed range (401 " +
        "otherwise, 429 over the rate limit), with the sealed headers and query added.",
    },
    {
      name: "proxy_below",
      path: "/{path*}",
      ...ROUTE,
      summary: "The same for any path below the address (appended to the upstream's).",
    },
  ],
  handle(store, config, request): PublicAnswer {
    const a = access(store.sql);
    const entry = { method: request.method, path: pathOf(request), callerIp: request.clientIp };
    const via = admitted(config, a.credential_hash, request);
    if (!via) {
      logRequest(store, { ...entry, via: null, status: 401, outcome: "denied" });
      const challenge = config.auth === "basic" ? 'Basic realm="proxy"' : 'Bearer realm="proxy"';
      return {
        type: "problem",
        code: "unauthorized",
        detail: "This proxy takes its own credential (or callers from its allowed ranges).",
        headers: { "www-authenticate": challenge },
      };
    }
    const wait = overLimit(store, config.rate_limit_per_minute);
    if (wait !== null) {
      logRequest(store, { ...entry, via, status: 429, outcome: "rate_limited" });
      return {
        type: "problem",
        code: "rate_limited",
        detail: `This proxy passes ${config.rate_limit_per_minute} requests a minute.`,
        headers: { "retry-after": String(wait) },
      };
    }
    const inject = JSON.parse(unseal(store.env, a.sealed_inject)) as {
      headers: Record<string, string>;
      query: Record<string, string>;
    };
    const headers = forwardedHeaders(request.headers);
    // The proxy's credential is for the proxy; a caller let in by its address keeps its own Authorization.
    if (via === "credential") delete headers["authorization"];
    if (request.clientIp) headers["x-forwarded-for"] = request.clientIp;
    for (const [name, value] of Object.entries(inject.headers)) headers[name.toLowerCase()] = value;
    const seq = logRequest(store, { ...entry, via, status: null, outcome: "passed" });
    return {
      type: "upstream",
      url: upstreamUrl(config, request, inject.query),
      requestHeaders: headers,
      redact: [...Object.values(inject.headers), ...Object.values(inject.query)],
      report: String(seq),
    };
  },
  settled: (store, _config, report, outcome) =>
    logOutcome(store.sql, Number(report), outcome.status, outcome.durationMs),
});
