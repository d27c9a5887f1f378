/** Types of the test-only bindings beside the worker's own. */
import type { D1Migration } from "cloudflare:test";
import type { Env as WorkerEnv } from "../src/env";
import type { EvmPeerInfo } from "./peers/evm-setup";

declare global {
  namespace Cloudflare {
    interface Env extends WorkerEnv {
      TEST_MIGRATIONS: D1Migration[];
      /** A D1 database no migration touches (readiness reports it). */
      TEST_EMPTY_DB: D1Database;
      TEST_EVM: EvmPeerInfo;
      TEST_RECEIVER_URL: string;
      TEST_OPENSSL_URL: string;
      TEST_POPPLER_URL: string;
      TEST_ENGINE_CONTAINER: DurableObjectNamespace;
      TEST_SMTP: { host: string; logUrl: string };
      TEST_S3: { endpoint: string; controlUrl: string; bucket: string; accessKeyId: string; secretAccessKey: string };
    }
  }
}
