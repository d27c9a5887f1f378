/** Per-kind samples for the contract test: a valid create body, an invalid one (with the path it must name), and a paid operation. */
export interface KindFixture {
  valid: Record<string, unknown>;
  invalid: { body: Record<string, unknown>; path: string };
  /** A paid data-plane call that succeeds on a fresh resource. */
  op: { method: string; path: string; body?: unknown };
}

import { env } from "cloudflare:test";

export const FIXTURES: Record<string, KindFixture> = {
  blobs: {
    valid: { public: true, max_downloads: 3, filename: "report.pdf" },
    invalid: { body: { max_downloads: 0 }, path: "max_downloads" },
    op: { method: "GET", path: "" },
  },
  objects: {
    valid: { content_type: "application/zip", filename: "dataset.zip" },
    invalid: { body: { filename: "a/b.zip" }, path: "filename" },
    op: { method: "GET", path: "" },
  },
  secrets: {
    valid: { value: "contract secret", passphrase: "correct horse" },
    invalid: { body: { value: "" }, path: "value" },
    op: { method: "GET", path: "" },
  },
  vaults: {
    valid: { label: "contract vault" },
    invalid: { body: { ttl_seconds: 10 }, path: "ttl_seconds" },
    op: { method: "GET", path: "/keys" },
  },
  deadman: {
    valid: { period_seconds: 3600, grace_seconds: 300, alert_url: `${env.TEST_RECEIVER_URL}/ok/contract-deadman` },
    invalid: { body: { period_seconds: 10, alert_url: `${env.TEST_RECEIVER_URL}/ok/x` }, path: "period_seconds" },
    op: { method: "POST", path: "/ping", body: {} },
  },
  debounce: {
    valid: { url: `${env.TEST_RECEIVER_URL}/ok/contract-debounce`, quiet_seconds: 60 },
    invalid: { body: { url: `${env.TEST_RECEIVER_URL}/ok/x`, quiet_seconds: 120, max_wait_seconds: 60 }, path: "max_wait_seconds" },
    op: { method: "POST", path: "/events", body: { event: { n: 1 } } },
  },
  snapshots: {
    // start_at far ahead: no fetch of its own races the contract's alarm runs (snapshots.test.ts covers fetching).
    valid: { url: `${env.TEST_RECEIVER_URL}/ok/contract-snapshots`, interval_seconds: 3600, start_at: "2099-01-01T00:00:00Z" },
    invalid: { body: { url: `${env.TEST_RECEIVER_URL}/ok/x`, interval_seconds: 30 }, path: "interval_seconds" },
    op: { method: "GET", path: "" },
  },
  attest: {
    valid: { receipt_headers: ["content-type", "etag"] },
    invalid: { body: { max_bytes: 0 }, path: "max_bytes" },
    op: { method: "POST", path: "/fetches", body: { url: `${env.TEST_RECEIVER_URL}/ok/contract-attest` } },
  },
  notary: {
    valid: { label: "contract notary" },
    invalid: { body: { ttl_seconds: 10 }, path: "ttl_seconds" },
    op: { method: "POST", path: "/stamps", body: { data: "contract" } },
  },
  drips: {
    valid: { url: `${env.TEST_RECEIVER_URL}/ok/contract-drips`, rate: { count: 10, period_seconds: 60 }, max_parallel: 2 },
    invalid: { body: { url: `${env.TEST_RECEIVER_URL}/ok/x`, rate: { count: 0, period_seconds: 60 } }, path: "rate.count" },
    op: { method: "POST", path: "/messages", body: { body: { n: 1 } } },
  },
  spread: {
    valid: { url: `${env.TEST_RECEIVER_URL}/ok/contract-spread`, period_seconds: 3600 },
    invalid: { body: { url: `${env.TEST_RECEIVER_URL}/ok/x`, period_seconds: 5 }, path: "period_seconds" },
    op: { method: "POST", path: "/members", body: { key: "worker-1" } },
  },
  delayed: {
    valid: { url: `${env.TEST_RECEIVER_URL}/ok/contract-delayed`, headers: { "X-Channel": "c1" } },
    invalid: { body: { url: "gopher://example.com/" }, path: "url" },
    op: { method: "POST", path: "/messages", body: { body: { n: 1 }, delay_seconds: 30 } },
  },
  schedules: {
    valid: { cron: "*/5 * * * *", timezone: "Europe/Berlin", url: `${env.TEST_RECEIVER_URL}/ok/contract-schedules` },
    invalid: { body: { cron: "61 * * * *", url: `${env.TEST_RECEIVER_URL}/ok/x` }, path: "cron" },
    op: { method: "GET", path: "/next" },
  },
  wakeups: {
    valid: { url: `${env.TEST_RECEIVER_URL}/ok/contract-wakeups`, delay_seconds: 30, body: { hello: "agent" } },
    invalid: { body: { url: "not a url", delay_seconds: 30 }, path: "url" },
    op: { method: "GET", path: "" },
  },
  idempotency: {
    valid: { window_seconds: 3600, lock_timeout_seconds: 60 },
    invalid: { body: { window_seconds: 3600, lock_timeout_seconds: 7200 }, path: "lock_timeout_seconds" },
    op: { method: "POST", path: "/claim", body: { key: "contract-key", fingerprint: "f1" } },
  },
  queues: {
    valid: { visibility_seconds: 60, max_receive_count: 3 },
    invalid: { body: { visibility_seconds: 0 }, path: "visibility_seconds" },
    op: { method: "POST", path: "/messages", body: { body: { job: 1 }, priority: 5 } },
  },
  journals: {
    valid: { label: "contract journal" },
    invalid: { body: { ttl_seconds: 10 }, path: "ttl_seconds" },
    op: { method: "POST", path: "/entries", body: { type: "contract", data: { n: 1 } } },
  },
  checkpoints: {
    valid: { keep_last: 10 },
    invalid: { body: { keep_last: 0 }, path: "keep_last" },
    op: { method: "POST", path: "/checkpoints", body: { value: { step: 1 } } },
  },
  counters: {
    valid: { initial: 5, min: 0, max: 100, label: "jobs" },
    invalid: { body: { initial: "five" }, path: "initial" },
    op: { method: "POST", path: "/increment", body: { by: 2 } },
  },
};
