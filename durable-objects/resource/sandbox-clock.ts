/**
 * Which sandbox a resource belongs to (docs/api.md#sandboxes), kept in its own storage: decided once,
 * at create, by the money that paid for it, and never changed. A sandbox's resource takes the
 * sandbox's clock (the offset of test-clock.ts, set when it joins and moved only by its sandbox),
 * and only that sandbox's money pays for it.
 */
import { AppError } from "../../src/http/errors";
import type { Payer } from "../../src/money/payment";
import { orIfMissing } from "./missing-table";
import { moveClockOffsetTo } from "./test-clock";

const TABLE =
  "CREATE TABLE IF NOT EXISTS sandbox_membership (id INTEGER PRIMARY KEY CHECK (id = 1), sandbox_id TEXT NOT NULL)";

/** The sandbox this object's resource belongs to; null for a real one (and in every object made before sandboxes). */
export function readSandboxId(sql: SqlStorage): string | null {
  return orIfMissing(
    "sandbox_membership",
    () =>
      sql.exec<{ sandbox_id: string }>("SELECT sandbox_id FROM sandbox_membership").toArray()[0]?.sandbox_id ?? null,
    null,
  );
}

/** Makes the resource being created a member of `sandboxId`, starting at the sandbox's clock; answers the offset. */
export function joinSandbox(sql: SqlStorage, sandboxId: string, offsetMs: number): number {
  sql.exec(TABLE);
  sql.exec("INSERT INTO sandbox_membership (id, sandbox_id) VALUES (1, ?)", sandboxId);
  return moveClockOffsetTo(sql, offsetMs);
}

/**
 * Money from outside a sandbox (x402, the free tier) pays nothing inside it: only the sandbox's credit
 * token does, and the account checks that (AccountObject). Refused before any work, so nothing is taken.
 */
export function refuseOutsideMoney(sandboxId: string | null, payer: Payer, priceMicro: number): void {
  if (sandboxId && payer.type === "prepaid" && priceMicro > 0) {
    throw new AppError(
      "forbidden",
      `This resource is in sandbox ${sandboxId}: only that sandbox's credit token pays for it (send it in X-CREDIT-TOKEN), never x402 or the free tier.`,
    );
  }
}
