-- Credentials, resource index and x402 payments. Times are Unix milliseconds.
-- No plaintext token is ever stored: only SHA-256 hashes (hex).

-- Every credit token and sub-token ever minted. The hot path never reads this
-- table (the token names its AccountObject, which holds the same hash); it is
-- the operator's registry and the record that survives a Durable Object loss.
CREATE TABLE credit_tokens (
  token_id   TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  parent_id  TEXT,
  token_hash TEXT NOT NULL,
  label      TEXT,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX credit_tokens_account ON credit_tokens (account_id);

-- One row per resource, written at create, extend, cancel and expiry. After a
-- resource ends its data is gone and this row is the 30-day tombstone.
CREATE TABLE resources (
  id         TEXT PRIMARY KEY,
  kind       TEXT NOT NULL,
  owner      TEXT NOT NULL,
  state      TEXT NOT NULL CHECK (state IN ('active', 'expired', 'cancelled')),
  label      TEXT,
  mgmt_hash  TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  ended_at   INTEGER
);
CREATE INDEX resources_owner ON resources (owner);
CREATE INDEX resources_ended ON resources (ended_at) WHERE ended_at IS NOT NULL;

-- x402 authorizations. The primary key is the atomic claim of (from, nonce):
-- a second insert of the same pair fails, so one signed payment runs one call.
CREATE TABLE payments (
  network      TEXT NOT NULL,
  payer        TEXT NOT NULL,
  nonce        TEXT NOT NULL,
  amount_micro INTEGER NOT NULL,
  operation    TEXT NOT NULL,
  status       TEXT NOT NULL CHECK (status IN ('claimed', 'settled')),
  tx_hash      TEXT,
  request_id   TEXT NOT NULL,
  valid_before INTEGER NOT NULL,
  created_at   INTEGER NOT NULL,
  PRIMARY KEY (network, payer, nonce)
);
