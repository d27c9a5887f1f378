/** Bindings and per-request variables shared by the worker, the Durable Objects and the tests. */
import type { AccountObject } from "../durable-objects/AccountObject";
import type { ResourceObject } from "../durable-objects/ResourceObject";

export interface Env {
  DB: D1Database;
  BUCKET: R2Bucket;
  ACCOUNTS: DurableObjectNamespace<AccountObject>;
  RESOURCES: DurableObjectNamespace<ResourceObject>;
  DELIVERIES: Queue;
  RATE_LIMITER: RateLimit;

  SERVICE_NAME: string;
  ENVIRONMENT: string;
  BASE_URL: string;
  AUTH_URL: string;
  PUBLIC_BASE_URL: string;

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
  MIN_PURCHASE_USD: string;
  MAX_PURCHASE_USD: string;
}

export interface Variables {
  requestId: string;
}

export interface AppEnv {
  Bindings: Env;
  Variables: Variables;
}
