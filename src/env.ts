/** Bindings and per-request variables shared by the worker, the Durable Objects and the tests. */
import type { KeyMaterial } from "./http/idempotency-key";

export interface Env {
  DB: D1Database;
  BUCKET: R2Bucket;
  /**
   * Reached only through src/stubs.ts, which types their stubs with the objects' RPC surfaces (src/rpc/): this
   * file sits below everything, and the RPC types reach up into money, delivery and the kind contract.
   */
  ACCOUNTS: DurableObjectNamespace;
  RESOURCES: DurableObjectNamespace;
  SANDBOXES: DurableObjectNamespace;
  DELIVERIES: Queue;
  /** The Worker's static assets (public/): the API reference's renderer, copied from npm by scripts/site-assets.mjs. */
  ASSETS: Fetcher;
  /** Per-credential limit (paid and management calls). */
  RATE_LIMITER: RateLimit;
  /** Per-client-IP limit (every call, and the only one for anonymous calls). */
  IP_RATE_LIMITER: RateLimit;
  /** Per-client-IP limit of the free Ask writes (feature requests, abuse reports): they fill D1 for nothing. */
  ASK_RATE_LIMITER: RateLimit;
  /** Requests to one public address, from all callers together (docs/api.md#public-addresses). */
  ADDRESS_RATE_LIMITER: RateLimit;

  SERVICE_NAME: string;
  ENVIRONMENT: string;
  BASE_URL: string;
  AUTH_URL: string;
  PUBLIC_BASE_URL: string;
  /**
   * Browser origins allowed to call `/mcp` besides the service's own, comma-separated
   * (`https://app.example.com`). A request with any other Origin answers 403 (DNS rebinding);
   * one with no Origin (an agent, not a page) is always served.
   */
  MCP_ALLOWED_ORIGINS?: string;

  X402_NETWORK: string;
  X402_CHAIN_ID: string;
  X402_ASSET: string;
  X402_ASSET_NAME: string;
  X402_ASSET_VERSION: string;
  X402_PAY_TO: string;
  X402_MAX_TIMEOUT_SECONDS: string;
  X402_SETTLEMENT: string;
  FACILITATOR_URL: string;
  RPC_URL: string;
  /** Secret: private key of the account that submits transferWithAuthorization in `direct` mode. */
  RELAYER_PRIVATE_KEY?: string;
  CREDIT_TOKEN_DAYS: string;
  /** The RATE_LIMITER / IP_RATE_LIMITER settings, repeated for the RateLimit-* headers (a binding cannot be asked). */
  RATE_LIMIT_PER_MINUTE: string;
  IP_RATE_LIMIT_PER_MINUTE: string;
  ASK_RATE_LIMIT_PER_MINUTE: string;
  ADDRESS_RATE_LIMIT_PER_MINUTE: string;
  /** Anonymous free tier: calls per client IP per day without any credential (0: every paid call needs payment). */
  FREE_CALLS_PER_DAY: string;
  /** Secret: bearer token of the operator endpoints (`/v1/admin/...`). Unset: those endpoints answer 404. */
  ADMIN_TOKEN?: string;
  /** Secret: 32 bytes, base64: AES-256-GCM key for secrets kept at rest (webhook signing secrets, …). */
  DATA_ENCRYPTION_KEY?: string;
  /**
   * A Gotenberg-compatible engine (src/engines/): real Gotenberg, or the engines image (engines/Dockerfile,
   * `scripts/engines.mjs`), on any host the Worker reaches in production; `scripts/engines.mjs` locally.
   * Renders PDFs unless Browser Rendering is configured, and converts office documents.
   */
  ENGINE_URL?: string;
  /**
   * The OCR engine (`POST /forms/ocr`, `GET /ocr/languages`: the engines image or `scripts/engines.mjs`),
   * when it is not at ENGINE_URL: Gotenberg has no OCR route, so beside a Gotenberg it has an address of its own.
   * Unset: ENGINE_URL.
   */
  OCR_ENGINE_URL?: string;
  /**
   * The engines image as a Cloudflare Container (durable-objects/EngineContainer.ts; the commented block at the
   * end of wrangler.toml): when bound, every engine request goes to it, and ENGINE_URL and OCR_ENGINE_URL are not used.
   */
  ENGINE_CONTAINER?: DurableObjectNamespace;
  /**
   * Browser Rendering's REST API (HTML/URL → PDF on Cloudflare): the account, and a secret API token with Browser
   * Rendering Edit.
   */
  BROWSER_RENDERING_ACCOUNT_ID?: string;
  BROWSER_RENDERING_API_TOKEN?: string;
  /**
   * egress-connectors' forward proxy, `http://user:password@host:port` (a secret): requests leave
   * through its CONNECT tunnels, from the addresses in EGRESS_IPS (comma-separated, published).
   */
  EGRESS_PROXY_URL?: string;
  EGRESS_IPS?: string;
  /** "true" lets outbound calls reach private and loopback addresses: local development and tests only. */
  ALLOW_PRIVATE_TARGETS: string;
  /** Multiplies the retry schedule of deliveries: "1" in production; tests use "0" to retry at once. */
  DELIVERY_RETRY_SCALE: string;
  /** Secret: RS256 private key (JWK JSON, with `kid`) signing access tokens, receipts and attestations. */
  OAUTH_PRIVATE_JWK?: string;
  /** Secret: the next signing key during a rotation; published in the JWKS before it signs anything. */
  OAUTH_NEXT_PRIVATE_JWK?: string;
  /** Secret: the notary's RFC 3161 TSA key (EC P-256 or RSA private JWK); with TSA_CERT_PEM. */
  TSA_PRIVATE_JWK?: string;
  /**
   * Secret: the TSA certificate (PEM) for TSA_PRIVATE_JWK, with a critical extendedKeyUsage timeStamping; published at
   * /v1/tsa/certificate.pem.
   */
  TSA_CERT_PEM?: string;
  /** The TSA policy OID put into every time stamp (default: the service's own, see docs/kinds.md). */
  TSA_POLICY_OID?: string;
  /**
   * Tests only (honoured while ENVIRONMENT is development or test): notify's HTTPS requests go to
   * `{NOTIFY_TEST_ORIGIN}/{host}{path}` instead, so a local receiver stands in for every provider.
   */
  NOTIFY_TEST_ORIGIN?: string;
  MIN_PURCHASE_USD: string;
  MAX_PURCHASE_USD: string;
  /**
   * Seconds between an isolate's flushes of its request counts to D1 (src/operator/usage-counters.ts); default 10, 0
   * after every request.
   */
  STATS_FLUSH_SECONDS?: string;
  /**
   * Which requests get a log line (src/operator/request-log.ts): `all` (the default), or `failures`, only answers
   * other than 2xx and 3xx and those slower than a second. Counts and Analytics Engine see every request either way.
   */
  REQUEST_LOG?: string;
  /** Optional Workers Analytics Engine dataset: one data point per request (src/operator/request-log.ts). */
  ANALYTICS?: AnalyticsEngineDataset;
}

/**
 * Development conveniences (settlement "none", the fixed sealing key, a per-isolate signing key)
 * exist only when ENVIRONMENT says so explicitly: a deploy that forgets to set it fails closed.
 */
export function isDevelopment(env: Pick<Env, "ENVIRONMENT">): boolean {
  return env.ENVIRONMENT === "development" || env.ENVIRONMENT === "test";
}

export interface Variables {
  requestId: string;
  /** The request's Idempotency-Key, derived (http/idempotency.ts), when it carries one. */
  idempotency?: KeyMaterial;
  /**
   * Set by runPaid once the call is paid (money/payment.ts), read by the request log (operator/request-log.ts):
   * the priced operation and the µUSD it charged (0 for a purchase, which buys credit, and for a free call).
   */
  charged?: { operation: string; micro: number };
}

export interface AppEnv {
  Bindings: Env;
  Variables: Variables;
}
