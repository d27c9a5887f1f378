/**
 * Narrowed management tokens (docs/api.md#narrowed-management-tokens), kept by the resource they narrow:
 * one row per token, by the SHA-256 of the token (never the token), with its limits as they apply (its
 * parent's folded in when it was made), so a call's check is one primary-key read, as the resource's own
 * token's is one comparison. Only the paid-call count looks up the token's line, on a paid call, in the
 * transaction that does and charges the work. A revoked row stays (so its holder hears 403 `token_revoked`
 * rather than a bare 401), with its descendants revoked in the same statement.
 */
import { AppError } from "../../src/http/errors";
import type { Limits } from "../../src/resources/token-limits";
import type { TokenView } from "../../src/rpc/resource";

export const GRANTS_TABLE = `CREATE TABLE resource_tokens (
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

/** Tokens made from tokens made from…: a line this long is checked on each paid call, so it stays short. */
export const MAX_DEPTH = 8;

/** Narrowed tokens one resource keeps, revoked ones included (a revoked row answers its holder). */
export const MAX_TOKENS = 1000;

type GrantRow = {
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

/** A narrowed token as its object reads it. */
export interface Grant extends Limits {
  tokenId: string;
  parentId: string | null;
}


const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function grantOf(row: GrantRow): Grant {
  return {
    tokenId: row.token_id, parentId: row.parent_id,
    operations: row.operations === null ? null : (JSON.parse(row.operations) as string[]),
    expiresAt: row.expires_at, maxPaidCalls: row.max_paid_calls,
    keyPrefixes: row.key_prefixes === null ? null : (JSON.parse(row.key_prefixes) as string[]),
  };
}

function viewOf(row: GrantRow): TokenView {
  const grant = grantOf(row);
  return {
    token_id: row.token_id, parent_token_id: row.parent_id, label: row.label, operations: grant.operations,
    expires_at: iso(row.expires_at), max_paid_calls: row.max_paid_calls, paid_calls: row.paid_calls,
    key_prefixes: grant.keyPrefixes, created_at: iso(row.created_at)!, revoked_at: iso(row.revoked_at),
  };
}

/** The token and every token made from it, by id (a recursive walk down parent_id). */
const SUBTREE = `WITH RECURSIVE tree(id) AS (SELECT ? UNION ALL SELECT t.token_id FROM resource_tokens t JOIN tree ON t.parent_id = tree.id)`;

export class ResourceGrants {
  constructor(private readonly sql: SqlStorage) {}

  private row(column: "token_hash" | "token_id", value: string): GrantRow | null {
    return this.sql.exec<GrantRow>(`SELECT * FROM resource_tokens WHERE ${column} = ?`, value).toArray()[0] ?? null;
  }

  /** The narrowed token with this hash, or null when none has it; a revoked one is refused here (403). */
  find(tokenHash: string): Grant | null {
    const row = this.row("token_hash", tokenHash);
    if (!row) return null;
    if (row.revoked_at !== null) throw new AppError("token_revoked", `This management token was revoked at ${iso(row.revoked_at)}.`, { extra: { limit: "revoked" } });
    return grantOf(row);
  }

  /** The token's line, itself first, then each token it was made from. */
  private line(tokenId: string): GrantRow[] {
    const out: GrantRow[] = [];
    for (let id: string | null = tokenId; id !== null && out.length <= MAX_DEPTH; ) {
      const row = this.row("token_id", id);
      if (!row) break;
      out.push(row);
      id = row.parent_id;
    }
    return out;
  }

  /** Paid calls the token may still make, over its whole line; null when no token in it has a cap. */
  remaining(tokenId: string): number | null {
    const left = this.line(tokenId).flatMap((row) => (row.max_paid_calls === null ? [] : [row.max_paid_calls - row.paid_calls]));
    return left.length ? Math.max(0, Math.min(...left)) : null;
  }

  count(): number {
    return this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM resource_tokens").one().n;
  }

  depth(tokenId: string): number {
    return this.line(tokenId).length;
  }

  /**
   * Counts one paid call against the token and every token it was made from, or refuses it (403) when
   * one of them has spent its cap. Runs inside the call's transaction, so a refused or failed call
   * counts nothing, and two calls cannot both take the last one (`count` false: only the refusal).
   */
  countPaidCall(tokenId: string, count = true): void {
    const line = this.line(tokenId);
    const spent = line.find((row) => row.max_paid_calls !== null && row.paid_calls >= row.max_paid_calls);
    if (spent) {
      const whose = spent.token_id === tokenId ? "This management token" : `The token it was made from (${spent.token_id})`;
      throw new AppError("token_calls_spent", `${whose} has made all ${spent.max_paid_calls} paid calls it was granted; nothing was charged.`, {
        extra: { limit: "max_paid_calls", token_id: spent.token_id, max_paid_calls: spent.max_paid_calls },
      });
    }
    if (count) for (const row of line) this.sql.exec("UPDATE resource_tokens SET paid_calls = paid_calls + 1 WHERE token_id = ?", row.token_id);
  }

  insert(input: { tokenId: string; tokenHash: string; parentId: string | null; label: string | null; limits: Limits; now: number }): TokenView {
    const { limits } = input;
    this.sql.exec(
      "INSERT INTO resource_tokens (token_id, token_hash, parent_id, label, operations, expires_at, max_paid_calls, key_prefixes, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
      input.tokenId, input.tokenHash, input.parentId, input.label,
      limits.operations && JSON.stringify(limits.operations), limits.expiresAt, limits.maxPaidCalls,
      limits.keyPrefixes && JSON.stringify(limits.keyPrefixes), input.now,
    );
    return viewOf(this.row("token_id", input.tokenId)!);
  }

  /** Tokens visible to `viewer` (null: the resource's own token sees all; else the ones made from it), oldest first. */
  list(viewer: string | null, limit: number, after: string | null): { items: TokenView[]; next_cursor: string | null } {
    const visible = viewer === null
      ? this.sql.exec<GrantRow>("SELECT * FROM resource_tokens WHERE rowid > ? ORDER BY rowid LIMIT ?", Number(after ?? 0), limit + 1)
      : this.sql.exec<GrantRow>(`${SUBTREE} SELECT t.* FROM resource_tokens t JOIN tree ON t.token_id = tree.id WHERE t.token_id <> ? AND t.rowid > ? ORDER BY t.rowid LIMIT ?`, viewer, viewer, Number(after ?? 0), limit + 1);
    const rows = visible.toArray();
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    const cursor = rows.length > limit && last ? String(this.sql.exec<{ rowid: number }>("SELECT rowid FROM resource_tokens WHERE token_id = ?", last.token_id).one().rowid) : null;
    return { items: page.map(viewOf), next_cursor: cursor };
  }

  /**
   * Revokes `tokenId` and every token made from it, if `viewer` (null: the resource's own token) may:
   * a narrowed token may revoke itself and what was made from it. Answers the ids revoked now.
   */
  revoke(viewer: string | null, tokenId: string, now: number): string[] {
    const row = this.row("token_id", tokenId);
    const visible = row && (viewer === null || viewer === tokenId || this.line(tokenId).some((r) => r.token_id === viewer));
    if (!visible) throw new AppError("not_found", `No token ${tokenId} is visible to this token.`);
    const ids = this.sql.exec<{ id: string }>(`${SUBTREE} SELECT id FROM tree`, tokenId).toArray().map((r) => r.id);
    this.sql.exec(`${SUBTREE} UPDATE resource_tokens SET revoked_at = ? WHERE token_id IN (SELECT id FROM tree) AND revoked_at IS NULL`, tokenId, now);
    return ids;
  }
}
