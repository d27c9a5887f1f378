-- Idempotency-Key records (API.md §3) and the anonymous free tier's daily counts (§10).
-- Times are Unix milliseconds. Nothing here can be read without the caller's own secrets:
-- see src/http/idempotency-store.ts.

-- One row per (caller, Idempotency-Key). `id` and `fingerprint` are derived with HKDF from
-- the presented credential (or x402 payer, or anonymous address) and the key, which the
-- server never stores; `response` is the first 2xx answer, AES-GCM encrypted under a key
-- derived the same way, so a replayed create's management token is never stored in clear.
-- The INSERT … ON CONFLICT DO UPDATE … WHERE expires_at <= now is the atomic claim: it
-- succeeds for a new key and for a stale one (an in-flight lock past its time, a response
-- past 24 h), and fails while the key is in flight or answered.
CREATE TABLE idempotency_keys (
  id          TEXT PRIMARY KEY,
  fingerprint TEXT NOT NULL,
  state       TEXT NOT NULL CHECK (state IN ('in_flight', 'done')),
  -- Random per claim: only the request that claimed the key may complete or release it.
  claim       TEXT NOT NULL,
  response    TEXT,
  created_at  INTEGER NOT NULL,
  -- in_flight: when the lock lapses (a crashed request); done: created_at + 24 h.
  expires_at  INTEGER NOT NULL
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);

-- Free calls per client address (a hash of the IPv4 address or IPv6 /64) per UTC day.
CREATE TABLE free_calls (
  ip_hash TEXT NOT NULL,
  day     TEXT NOT NULL,
  calls   INTEGER NOT NULL,
  PRIMARY KEY (ip_hash, day)
);
