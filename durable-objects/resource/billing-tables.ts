/**
 * What a resource keeps of its billing (billing.ts): the holds its accounts granted it, and the charges
 * written against them in the same transaction as each paid call, until they are settled.
 */
export const BILLING_TABLES = [
  `CREATE TABLE billing_holds (
    hold_id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL,
    token_id TEXT NOT NULL,
    token_hash TEXT NOT NULL,
    amount INTEGER NOT NULL,
    closed INTEGER NOT NULL DEFAULT 0,
    flush_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
  )`,
  `CREATE TABLE billing_charges (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    hold_id TEXT NOT NULL,
    at INTEGER NOT NULL,
    operation TEXT NOT NULL,
    amount INTEGER NOT NULL,
    request_id TEXT NOT NULL
  )`,
];

type HoldRow = {
  hold_id: string;
  account_id: string;
  token_id: string;
  token_hash: string;
  amount: number;
  closed: number;
  flush_at: number;
  expires_at: number;
};

/** A hold as kept in memory: its row plus what its charges add up to. */
export type Hold = HoldRow & { used: number };
