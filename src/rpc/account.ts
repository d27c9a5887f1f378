/**
 * The AccountObject's RPC surface, as the worker sees it: the methods and the data they
 * take and give. Declared here, in src/, and implemented by durable-objects/AccountObject.ts,
 * so the worker's code never imports the object's and the dependency graph runs one way.
 */
import type { Result } from "../http/errors";

export type TokenRow = {
  token_id: string;
  parent_id: string | null;
  token_hash: string;
  label: string | null;
  cap: number | null;
  spent: number;
  held: number;
  created_at: number;
  expires_at: number;
};

export type LedgerRow = {
  seq: number;
  at: number;
  token_id: string;
  type: "purchase" | "topup" | "charge" | "refund";
  operation: string;
  resource_id: string | null;
  amount: number;
  request_id: string;
  ref: string | null;
};

export interface Credential {
  tokenId: string;
  /** Null when the worker verified an access token issued for this token instead of its secret. */
  tokenHash: string | null;
}

export interface BalanceView {
  token_id: string;
  type: "credit" | "subtoken";
  balance: number;
  spent: number;
  cap: number | null;
  cap_remaining: number | null;
  expires_at: number;
  parent_id: string | null;
  label: string | null;
}

export interface ChargeRequest extends Credential {
  amount: number;
  operation: string;
  resourceId: string | null;
  requestId: string;
  /**
   * The sandbox the resource paid for is in (null: none): sandbox money pays only inside its sandbox,
   * other money only outside (docs/api.md#sandboxes). Undefined for a creation, which the money decides.
   */
  sandboxId?: string | null;
}

/**
 * A hold's whole use, reported by its resource: the charges are captured, the rest released.
 * `charges` is a JSON array of `[at, operation, amount, request_id]` in the order they were made,
 * built by the resource's SQLite and read by the account's: a settlement carries a second or more
 * of a resource's calls, and neither side turns them into objects one by one.
 */
export interface Settlement {
  holdId: string;
  charges: string;
}

export interface HoldRequest extends Credential {
  resourceId: string;
  /** Price of the call that needs the hold: the grant is a whole multiple of it. */
  price: number;
  want: number;
  /** Holds the resource is done with, settled first in the same round trip. */
  settlements: Settlement[];
  /** As in ChargeRequest: the resource's sandbox; null or absent for a real resource. */
  sandboxId?: string | null;
}

export interface HoldGrant {
  holdId: string;
  amount: number;
  expiresAt: number;
}

/**
 * A charge to give back: by its id, or (when its id was never learned) by its resource, operation, request and a time
 * at or before it. `lostAnswer`: a create whose answer never reached its caller, given back by the caller's retry,
 * which knows neither the charge's id nor the request that took it (resources/create-identity.ts): the one of that
 * resource and operation still standing.
 */
export type RefundRequest = { requestId: string } & (
  { chargeId: number } | { resourceId: string; operation: string; since: number; lostAnswer?: true }
);

export interface AccountApi {
  /** `sandboxId`: the account is that sandbox's money (docs/api.md#sandboxes). */
  open(input: {
    root: Omit<TokenRow, "spent" | "held" | "cap" | "parent_id">;
    amount: number;
    ref: string;
    requestId: string;
    sandboxId?: string;
  }): Promise<Result<BalanceView>>;
  void(): Promise<void>;
  topUp(
    input: Credential & { amount: number; ref: string; requestId: string; expiresAt: number },
  ): Promise<Result<BalanceView>>;
  revertTopUp(input: { ref: string }): Promise<void>;
  balance(input: Credential): Promise<Result<BalanceView>>;
  /** Answers the charge's id and whose money it was: a sandbox's id, or null. */
  charge(input: ChargeRequest): Promise<Result<{ chargeId: number; sandboxId: string | null }>>;
  refund(input: RefundRequest): Promise<void>;
  refundCall(input: {
    tokenId: string;
    callRequestId: string;
    requestId: string;
  }): Promise<Result<{ refunded: number; charges: number; view: BalanceView }>>;
  hold(input: HoldRequest): Promise<Result<HoldGrant>>;
  settle(input: { settlements: Settlement[] }): Promise<void>;
  mintSubtoken(
    input: Credential & { child: Omit<TokenRow, "spent" | "held" | "parent_id">; requestId: string },
  ): Promise<Result<BalanceView>>;
  authenticate(input: Credential): Promise<Result<{ tokenId: string }>>;
  statement(
    input: Credential & { since: number; until: number },
  ): Promise<Result<{ rows: LedgerRow[]; view: BalanceView }>>;
}
