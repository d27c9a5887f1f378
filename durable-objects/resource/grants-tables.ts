/**
 * The narrowed tokens' table (grants.ts) and how a row reads: its limits, and the token as the API shows it
 * (TokenView). The table only grows (resource/migrations.ts).
 */
import type { Limits } from "../../src/resources/token-limits";
import type { TokenView } from "../../src/rpc/resource";

export const GRANTS_TABLE = `CREATE TABLE IF NOT EXISTS resource_tokens (
  token_id TEXT PRIMARY KEY,
  token_hash TEXT NOT NULL UNIQUE,
  -- The token it was made from; null when the resource's own token made it.
  parent_id TEXT,
  label TEXT,
  -- JSON array of the names it may call (read-only expanded); null: every name but extend, export and cancel.
  operations TEXT,
  -- Epoch ms; null: until the resource ends.
  expires_at INTEGER,
  max_paid_calls INTEGER,
  -- Paid calls made with it and with every token made from it.
  paid_calls INTEGER NOT NULL DEFAULT 0,
  -- JSON array; null: every key.
  key_prefixes TEXT,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER
)`;

export type GrantRow = {
  token_id: string;
  token_hash: string;
  parent_id: string | null;
  label: string | null;
  operations: string | null;
  expires_at: number | null;
  max_paid_calls: number | null;
  paid_calls: number;
  key_prefixes: string | null;
  created_at: number;
  revoked_at: number | null;
};

export const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function limitsOf(row: GrantRow): Limits {
  return {
    operations: row.operations === null ? null : (JSON.parse(row.operations) as string[]),
    expiresAt: row.expires_at,
    maxPaidCalls: row.max_paid_calls,
    keyPrefixes: row.key_prefixes === null ? null : (JSON.parse(row.key_prefixes) as string[]),
  };
}

export function viewOf(row: GrantRow): TokenView {
  const grant = limitsOf(row);
  return {
    token_id: row.token_id,
    parent_token_id: row.parent_id,
    label: row.label,
    operations: grant.operations,
    expires_at: iso(row.expires_at),
    max_paid_calls: row.max_paid_calls,
    paid_calls: row.paid_calls,
    key_prefixes: grant.keyPrefixes,
    created_at: iso(row.created_at)!,
    revoked_at: iso(row.revoked_at),
  };
}

/** The token and every token made from it, by id (a recursive walk down parent_id). */
export const SUBTREE =
  `WITH RECURSIVE tree(id) AS (SELECT ? UNION ALL SELECT t.token_id FROM resource_tokens t JOIN tree ON ` +
  `t.parent_id = tree.id)`;
