/** SQLite schema of an AccountObject. Amounts are integer µUSD, times Unix ms. */
export const ACCOUNT_SCHEMA = `
CREATE TABLE IF NOT EXISTS account (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  -- Spendable now: purchases and top-ups, less charges and open holds.
  balance INTEGER NOT NULL CHECK (balance >= 0)
);
CREATE TABLE IF NOT EXISTS tokens (
  token_id TEXT PRIMARY KEY,
  parent_id TEXT,
  token_hash TEXT NOT NULL,
  label TEXT,
  cap INTEGER,
  -- Captured spend and open holds of this token and its descendants (caps count both).
  spent INTEGER NOT NULL DEFAULT 0,
  held INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
-- Money reserved for one resource's data-plane charges, settled in one piece.
CREATE TABLE IF NOT EXISTS holds (
  hold_id TEXT PRIMARY KEY,
  token_id TEXT NOT NULL,
  resource_id TEXT NOT NULL,
  amount INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS ledger (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  at INTEGER NOT NULL,
  token_id TEXT NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('purchase', 'topup', 'charge', 'refund')),
  operation TEXT NOT NULL,
  resource_id TEXT,
  amount INTEGER NOT NULL,
  request_id TEXT NOT NULL,
  ref TEXT
);
CREATE INDEX IF NOT EXISTS ledger_at ON ledger (at);
-- Set when the account is a sandbox's money (docs/api.md#sandboxes): it pays only inside that sandbox.
CREATE TABLE IF NOT EXISTS sandbox_money (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  sandbox_id TEXT NOT NULL
);
`;
