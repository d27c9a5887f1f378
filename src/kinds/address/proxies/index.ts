/**
 * proxies: an auth-gated reverse proxy (oauth2-proxy, ngrok). Its public address passes callers
 * with the proxy's own credential (bearer or basic, made by the service, shown once, kept as a
 * hash) or from allowed ranges to the upstream, streaming both ways, with upstream secrets
 * (headers, query parameters) injected from sealed storage and masked in whatever comes back.
 * Rate limited per proxy; every request logged with its caller, status and timing.
 */
import { z } from "@hono/zod-openapi";
import { noInput } from "../../../openapi/schemas";
import { seal } from "../../../auth/sealing";
import { AppError } from "../../../http/errors";
import { kindOf } from "../../../kind/kind";
import { proxyFace } from "./public";
import {
  allLog,
  counts,
  logPage,
  newCredential,
  saveAccess,
  setCredentialHash,
  TABLES,
  type ProxySealed,
} from "./store";
import {
  credential,
  LOG_KEPT,
  logInput,
  logPage as logPageSchema,
  MAX_ALLOWED_RANGES,
  MAX_BODY_BYTES,
  MAX_RATE_PER_MINUTE,
  proxyCreate,
  proxyInfo,
  type ProxyConfig,
  type ProxyCreate,
} from "./schema";

const OP_PRICE = 100; // µUSD, $0.0001 per call

/** The create body (with the secrets) on the way in; what the record shows once sealCreate took them out. */
type Config = ProxyCreate | ProxyConfig;

const kind = kindOf<Config>();

const names = (injected: string[] | Record<string, string>) =>
  Array.isArray(injected) ? injected : Object.keys(injected);

const infoOf = (config: Config, sql: SqlStorage) => ({
  upstream_url: config.upstream_url,
  auth: config.auth,
  allow_ips: config.allow_ips,
  inject_headers: names(config.inject_headers),
  inject_query: names(config.inject_query),
  rate_limit_per_minute: config.rate_limit_per_minute,
  ...counts(sql),
});

export const proxies = kind.define({
  kind: "proxies",
  family: "address",
  title: "Auth-gated reverse proxy",
  summary:
    "A public URL proxying to your upstream (streaming both ways) only for callers with the proxy's own " +
    "credential (bearer or basic, shown once) or from allowed IP ranges; upstream secrets (headers, query) " +
    "injected sealed and never shown; rate limit; request log.",
  createSchema: proxyCreate,
  example: {
    upstream_url: "https://example.com/api",
    auth: "bearer",
    inject_headers: { "x-api-key": "sk_live_51HqF0mJ7yXcT3kR9" },
    allow_ips: ["192.0.2.0/24"],
  },
  targetFields: ["upstream_url"],
  migrations: [{ sql: TABLES }],
  dayPriceMicro: 2000,
  defaultTtlSeconds: 30 * 86400,
  maxTtlSeconds: 365 * 86400,
  limits: {
    max_body_bytes: MAX_BODY_BYTES,
    max_allowed_ranges: MAX_ALLOWED_RANGES,
    max_rate_per_minute: MAX_RATE_PER_MINUTE,
    log_kept: LOG_KEPT,
  },
  sealCreate: async (env, given, seed) => {
    const c = given as ProxyCreate; // a create body: the record's form never comes back in
    const made = c.auth === "none" ? null : newCredential(c, seed);
    const sealed: ProxySealed = {
      credential_hash: made?.hash ?? null,
      sealed_inject: seal(env, JSON.stringify({ headers: c.inject_headers, query: c.inject_query })),
    };
    return {
      config: { ...c, inject_headers: names(c.inject_headers), inject_query: names(c.inject_query) },
      sealed,
      ...(made ? { credential: made.shown } : {}),
    };
  },
  init: (store, _config, sealed) => saveAccess(store.sql, sealed as unknown as ProxySealed),
  usage: (store) => counts(store.sql),
  exportData: (store, config) => ({ ...infoOf(config, store.sql), log: allLog(store.sql) }),
  public: proxyFace,
  ops: [
    kind.op({
      name: "info",
      method: "get",
      path: "",
      summary: "Upstream, access rules (injected names only) and counts",
      priceMicro: OP_PRICE,
      input: noInput,
      output: proxyInfo,
      run: (store, config) => infoOf(config, store.sql),
    }),
    kind.op({
      name: "log",
      method: "get",
      path: "/log",
      summary: "Requests, newest first: caller, how it got in, status and timing",
      priceMicro: OP_PRICE,
      input: logInput,
      output: logPageSchema,
      example: { input: { limit: 10 } },
      run: (store, _config, input) => logPage(store.sql, input.cursor ? Number(input.cursor) : null, input.limit),
    }),
    kind.op({
      name: "rotate_credential",
      method: "post",
      path: "/credential",
      summary: "A new credential, shown this once; the old one stops working at once",
      priceMicro: OP_PRICE,
      input: noInput,
      output: credential,
      errors: [409],
      run: (store, config) => {
        if (config.auth === "none")
          throw new AppError(
            "conflict",
            "This proxy takes no credential (auth none): only its allowed ranges reach the upstream.",
          );
        const made = newCredential(config);
        setCredentialHash(store.sql, made.hash);
        return made.shown as z.infer<typeof credential>;
      },
    }),
  ],
});
