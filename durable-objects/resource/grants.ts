/**
 * Narrowed management tokens (docs/api.md#narrowed-management-tokens), kept by the resource they narrow:
 * one row per token, by the SHA-256 of the token (never the token), with its limits as they apply (its
 * parent's folded in when it was made), so a call's check is one primary-key read, as the resource's own
 * token's is one comparison. Only the paid-call count looks up the token's line, on a paid call, in the
 * transaction that does and charges the work. A revoked row stays (so its holder hears 403 `token_revoked`
 * rather than a bare 401), with its descendants revoked in the same statement.
 */
import { AppError } from "../../src/http/errors";
import { deriveLimits, UNLIMITED, type Limits } from "../../src/resources/token-limits";
import type { AnyKind } from "../../src/kind/kind";
import type { AskedLimits, TokenView } from "../../src/rpc/resource";
import { iso, limitsOf, SUBTREE, viewOf, type GrantRow } from "./grants-tables";

/** Tokens made from tokens made from…: a line this long is checked on each paid call, so it stays short. */
export const MAX_DEPTH = 8;

/** Narrowed tokens one resource keeps, revoked ones included (a revoked row answers its holder). */
export const MAX_TOKENS = 1000;

/** A narrowed token as its object reads it. */
export interface Grant extends Limits {
  tokenId: string;
  parentId: string | null;
  /** Its line: its own id, then each token's it was made from (a token's parents never change). */
  line: string[];
}

const spentError = (row: { token_id: string; max_paid_calls: number | null }, tokenId: string) =>
  new AppError(
    "token_calls_spent",
    `${row.token_id === tokenId ? "This management token" : `The token it was made from (${row.token_id})`}` +
      ` has made all ${row.max_paid_calls} paid calls it was granted; nothing was charged.`,
    {
      extra: { limit: "max_paid_calls", token_id: row.token_id, max_paid_calls: row.max_paid_calls },
    },
  );

export class ResourceGrants {
  /**
   * Tokens read since the object started, by hash: a token's limits never change once made, so a call reads
   * them (and its line) once per object lifetime; a revoke forgets them all. Unknown hashes are not kept.
   */
  private readonly known = new Map<string, Grant | { revokedAt: number }>();

  constructor(private readonly sql: SqlStorage) {}

  private row(column: "token_hash" | "token_id", value: string): GrantRow | null {
    return this.sql.exec<GrantRow>(`SELECT * FROM resource_tokens WHERE ${column} = ?`, value).toArray()[0] ?? null;
  }

  /** The narrowed token with this hash, or null when none has it; a revoked one is refused here (403). */
  find(tokenHash: string): Grant | null {
    let known = this.known.get(tokenHash);
    if (!known) {
      const row = this.row("token_hash", tokenHash);
      if (!row) return null;
      known =
        row.revoked_at !== null
          ? { revokedAt: row.revoked_at }
          : { tokenId: row.token_id, parentId: row.parent_id, line: this.line(row), ...limitsOf(row) };
      this.known.set(tokenHash, known);
    }
    if ("revokedAt" in known)
      throw new AppError("token_revoked", `This management token was revoked at ${iso(known.revokedAt)}.`, {
        extra: { limit: "revoked" },
      });
    return known;
  }

  /** The ids of a token's line, itself first, then each token it was made from. */
  private line(row: GrantRow): string[] {
    const out = [row.token_id];
    for (let parent = row.parent_id; parent !== null && out.length <= MAX_DEPTH;) {
      out.push(parent);
      parent = this.row("token_id", parent)?.parent_id ?? null;
    }
    return out;
  }

  private lineRows(grant: Grant): { token_id: string; paid_calls: number; max_paid_calls: number | null }[] {
    return this.sql
      .exec<{ token_id: string; paid_calls: number; max_paid_calls: number | null }>(
        `SELECT token_id, paid_calls, max_paid_calls FROM resource_tokens WHERE token_id IN (` +
          `${grant.line.map(() => "?").join(", ")})`,
        ...grant.line,
      )
      .toArray();
  }

  /** Paid calls the token may still make, over its whole line; null when no token in it has a cap. */
  remaining(grant: Grant): number | null {
    const left = this.lineRows(grant).flatMap((row) =>
      row.max_paid_calls === null ? [] : [row.max_paid_calls - row.paid_calls],
    );
    return left.length ? Math.max(0, Math.min(...left)) : null;
  }

  count(): number {
    return this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM resource_tokens").one().n;
  }

  /**
   * Refuses (403) a paid call once the token, or one it was made from, has spent its cap: before a prepare step works
   * for nothing.
   */
  checkPaidCall(grant: Grant): void {
    const spent = this.lineRows(grant).find(
      (row) => row.max_paid_calls !== null && row.paid_calls >= row.max_paid_calls,
    );
    if (spent) throw spentError(spent, grant.tokenId);
  }

  /**
   * Counts one paid call against the token and every token it was made from, in one statement, or refuses
   * it (403) when that takes one of them past its cap. Runs inside the call's transaction, so the refusal
   * rolls the count back with the work, a failed call counts nothing, and two calls cannot both take the last.
   */
  countPaidCall(grant: Grant): void {
    const counted = this.sql
      .exec<{ token_id: string; paid_calls: number; max_paid_calls: number | null }>(
        `UPDATE resource_tokens SET paid_calls = paid_calls + 1 WHERE token_id IN (` +
          `${grant.line.map(() => "?").join(", ")}) RETURNING token_id, paid_calls, max_paid_calls`,
        ...grant.line,
      )
      .toArray();
    const over = counted.find((row) => row.max_paid_calls !== null && row.paid_calls > row.max_paid_calls);
    if (over) throw spentError(over, grant.tokenId);
  }

  /**
   * A narrower token made by `maker` (null: the resource's own token): its limits derived from the maker's and
   * what was asked, never wider; refused past MAX_DEPTH narrowings or MAX_TOKENS tokens.
   */
  mint(
    maker: Grant | null,
    kind: AnyKind,
    input: { tokenId: string; tokenHash: string; label: string | null; asked: AskedLimits },
    now: number,
    resourceEnd: number,
  ): TokenView {
    if (maker && maker.line.length >= MAX_DEPTH) {
      throw new AppError(
        "validation_failed",
        `Tokens can be narrowed ${MAX_DEPTH} times over; this one is the last of its line. Make the token ` +
          `from one nearer the resource's own.`,
      );
    }
    if (this.count() >= MAX_TOKENS)
      throw new AppError(
        "storage_full",
        `A resource keeps at most ${MAX_TOKENS} narrowed tokens, revoked ones included.`,
      );
    const limits = deriveLimits(
      kind,
      maker ?? UNLIMITED,
      maker && this.remaining(maker),
      input.asked,
      now,
      resourceEnd,
    );
    return this.insert({
      tokenId: input.tokenId,
      tokenHash: input.tokenHash,
      parentId: maker?.tokenId ?? null,
      label: input.label,
      limits,
      now,
    });
  }

  private insert(input: {
    tokenId: string;
    tokenHash: string;
    parentId: string | null;
    label: string | null;
    limits: Limits;
    now: number;
  }): TokenView {
    const { limits } = input;
    this.sql.exec(
      "INSERT INTO resource_tokens (token_id, token_hash, parent_id, label, operations, expires_at, " +
        "max_paid_calls, key_prefixes, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
      input.tokenId,
      input.tokenHash,
      input.parentId,
      input.label,
      limits.operations && JSON.stringify(limits.operations),
      limits.expiresAt,
      limits.maxPaidCalls,
      limits.keyPrefixes && JSON.stringify(limits.keyPrefixes),
      input.now,
    );
    return viewOf(this.row("token_id", input.tokenId)!);
  }

  /** Tokens visible to `viewer` (null: the resource's own token sees all; else the ones made from it), oldest first. */
  list(viewer: string | null, limit: number, after: string | null): { items: TokenView[]; next_cursor: string | null } {
    const visible =
      viewer === null
        ? this.sql.exec<GrantRow>(
            "SELECT * FROM resource_tokens WHERE rowid > ? ORDER BY rowid LIMIT ?",
            Number(after ?? 0),
            limit + 1,
          )
        : this.sql.exec<GrantRow>(
            `${SUBTREE} SELECT t.* FROM resource_tokens t JOIN tree ON t.token_id = tree.id WHERE ` +
              `t.token_id <> ? AND t.rowid > ? ORDER BY t.rowid LIMIT ?`,
            viewer,
            viewer,
            Number(after ?? 0),
            limit + 1,
          );
    const rows = visible.toArray();
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    const cursor =
      rows.length > limit && last
        ? String(
            this.sql
              .exec<{ rowid: number }>("SELECT rowid FROM resource_tokens WHERE token_id = ?", last.token_id)
              .one().rowid,
          )
        : null;
    return { items: page.map(viewOf), next_cursor: cursor };
  }

  /**
   * Revokes `tokenId` and every token made from it, if `viewer` (null: the resource's own token) may:
   * a narrowed token may revoke itself and what was made from it. Answers the ids revoked now.
   */
  revoke(viewer: string | null, tokenId: string, now: number): string[] {
    const row = this.row("token_id", tokenId);
    const visible = row && (viewer === null || this.line(row).includes(viewer));
    if (!visible) throw new AppError("not_found", `No token ${tokenId} is visible to this token.`);
    this.known.clear();
    const ids = this.sql
      .exec<{ id: string }>(`${SUBTREE} SELECT id FROM tree`, tokenId)
      .toArray()
      .map((r) => r.id);
    this.sql.exec(
      `${SUBTREE} UPDATE resource_tokens SET revoked_at = ? WHERE token_id IN (SELECT id FROM tree) AND ` +
        `revoked_at IS NULL`,
      tokenId,
      now,
    );
    return ids;
  }
}
