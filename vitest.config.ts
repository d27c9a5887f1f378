/**
 * Three projects:
 * - api: the worker in workerd with real D1, R2, Durable Objects and Queues (settlement "none");
 * - direct: the same worker settling x402 on a real local EVM (hardhat + an EIP-3009 token);
 * - node: checks that need Node (the OpenAPI linter).
 */
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { exportJWK, generateKeyPair } from "jose";
import type { EvmPeerInfo } from "./test/peers/evm-setup";
import LongFirstSequencer from "./test/sequencer.mjs";

const migrations = await readD1Migrations("./migrations");

/** A fixed test payee, so tests can sign payments without reading the config back. */
export const TEST_PAY_TO = "0x2222222222222222222222222222222222222222";

/** A fresh signing key per run, configured as in production (tests also read it to forge tokens). */
const { privateKey } = await generateKeyPair("RS256", { extractable: true });
const OAUTH_PRIVATE_JWK = JSON.stringify({ ...(await exportJWK(privateKey)), kid: "test-key-1" });

/**
 * Low-limit twins of RATE_LIMITER / IP_RATE_LIMITER / ADDRESS_RATE_LIMITER. test/api/rate-limit.test.ts hands them to
 * the worker in place of the real ones (its own env for its own requests), so the 429 comes
 * after a handful of calls while every other test keeps the wrangler.toml limits.
 */
const TEST_RATE_LIMITS = {
  TEST_RATE_LIMITER: { namespace_id: "9001", simple: { limit: 5, period: 60 as const } },
  TEST_ASK_RATE_LIMITER: { namespace_id: "9003", simple: { limit: 3, period: 60 as const } },
  // The suite's own Ask tests all come from one address: the production 10 a minute would trip them.
  ASK_RATE_LIMITER: { namespace_id: "1003", simple: { limit: 1000, period: 60 as const } },
  TEST_IP_RATE_LIMITER: { namespace_id: "9002", simple: { limit: 8, period: 60 as const } },
  TEST_ADDRESS_RATE_LIMITER: { namespace_id: "9004", simple: { limit: 6, period: 60 as const } },
};

/** The worker's request log line (src/operator/request-log.ts): one per request, kept out of the test output. */
const quietRequestLog = (log: string) => (log.startsWith('{"request_id":"req_') ? false : undefined);

const workerProject = (name: string, include: string[], extra: { globalSetup?: string[] } = {}) => ({
  // Bounds, not timing assertions: with two files at a time on a busy 2-core machine the heaviest tests (1,000
  // parallel requests, 10 MiB bodies) ran past a minute.
  test: { name, include, setupFiles: ["./test/setup.ts"], testTimeout: 120_000, hookTimeout: 180_000, ...extra },
});

export default defineConfig({
  test: {
    onConsoleLog: quietRequestLog,
    // The usual output, then the slowest files (test/reporters/slowest-files.ts).
    reporters: ["default", "./test/reporters/slowest-files.ts"],
    // Three files at a time, whatever their project (vitest's default on 2 cores is one: the suite ran file after
    // file, the cores a third busy, most files waiting on the processes and timers they start; at two, half busy).
    // The long-waiting files start first (test/sequencer.mjs). docs/testing.md, "Where the suite's time goes", has
    // the measurements.
    maxWorkers: 3,
    sequence: { sequencer: LongFirstSequencer },
    projects: [
      {
        ...workerProject("api", ["test/api/**/*.test.ts"], {
          globalSetup: [
            "./test/peers/receiver-setup.ts",
            "./test/peers/smtp-setup.ts",
            "./test/peers/openssl-setup.ts",
            "./test/peers/tsa-setup.ts",
            "./test/peers/engines-setup.ts",
            "./test/peers/egress-proxy-setup.ts",
            "./test/peers/s3-setup.ts",
          ],
        }),
        plugins: [
          cloudflareTest(({ inject }) => ({
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              bindings: {
                // "test" unlocks the test clock (test/harness.ts advance); development conveniences stay on.
                ENVIRONMENT: "test",
                TEST_MIGRATIONS: migrations,
                X402_PAY_TO: TEST_PAY_TO,
                OAUTH_PRIVATE_JWK,
                ADMIN_TOKEN: "test-admin-token",
                // The operator's counts reach D1 after every request, so a test reads what it just did.
                STATS_FLUSH_SECONDS: "0",
                // Likewise the notary's TSA key and certificate, made once per run (test/peers/tsa-setup.ts).
                ...inject("tsaSecrets"),
                // The notary's tokens are checked by the real `openssl ts -verify` (test/peers/openssl.ts).
                TEST_OPENSSL_URL: inject<string>("opensslUrl"),
                // Deliveries go to the local receiver, and failed ones are retried at once instead of on the schedule.
                TEST_RECEIVER_URL: inject<string>("receiverUrl"),
                ALLOW_PRIVATE_TARGETS: "true",
                DELIVERY_RETRY_SCALE: "0",
                // notify's providers are the receiver too: their HTTPS requests arrive at
                // /provider/notify/{host}{path}.
                NOTIFY_TEST_ORIGIN: `${inject<string>("receiverUrl")}/provider/notify`,
                // notify's mailto:// channel sends to a real local SMTP server (test/peers/smtp.ts).
                TEST_SMTP: inject("smtp"),
                // pdf renders with the local engines: Debian's chromium behind Gotenberg's routes
                // (scripts/engines.mjs).
                ENGINE_URL: inject<string>("engineUrl"),
                TEST_POPPLER_URL: inject<string>("popplerUrl"),
                // egress-connectors leave through a real forward proxy (Debian's tinyproxy), sending from 127.0.0.2.
                EGRESS_PROXY_URL: inject("egressProxy").url,
                EGRESS_IPS: inject("egressProxy").ips,
                // transfers copy to and from a real S3-compatible server (s3rver behind a SigV4-checking front,
                // test/peers/s3.ts).
                TEST_S3: inject("s3"),
              },
              ratelimits: TEST_RATE_LIMITS,
              // A real D1 database that no migration ever touches: readiness must report it
              // (test/api/operator-config.test.ts).
              d1Databases: { TEST_EMPTY_DB: "test-empty-db" },
              // The engines' Container object, unbound for the worker (ENGINE_CONTAINER would take every engine call):
              // test/api/engine-endpoint.test.ts hands it over where it means to. Containers do not run here.
              durableObjects: { TEST_ENGINE_CONTAINER: { className: "EngineContainer", useSQLite: true } },
            },
          })),
        ],
      },
      {
        ...workerProject("direct", ["test/direct/**/*.test.ts"], {
          globalSetup: ["./test/peers/evm-setup.ts", "./test/peers/tsa-setup.ts"],
        }),
        plugins: [
          cloudflareTest(({ inject }) => {
            const evm = inject<EvmPeerInfo>("evm");
            return {
              wrangler: { configPath: "./wrangler.toml" },
              miniflare: {
                bindings: {
                  ENVIRONMENT: "test",
                  TEST_MIGRATIONS: migrations,
                  // No flush timer left running past a test (src/operator/usage-counters.ts).
                  STATS_FLUSH_SECONDS: "0",
                  TEST_EVM: evm,
                  // watches' chain_balance reads the local node, on loopback.
                  ALLOW_PRIVATE_TARGETS: "true",
                  X402_SETTLEMENT: "direct",
                  X402_PAY_TO: TEST_PAY_TO,
                  OAUTH_PRIVATE_JWK,
                  ...inject("tsaSecrets"),
                  X402_ASSET: evm.token,
                  X402_CHAIN_ID: String(evm.chainId),
                  RPC_URL: evm.rpcUrl,
                  RELAYER_PRIVATE_KEY: evm.relayerKey,
                },
              },
            };
          }),
        ],
      },
      { test: { name: "node", include: ["test/node/**/*.test.ts"], environment: "node", testTimeout: 120_000 } },
    ],
  },
});
