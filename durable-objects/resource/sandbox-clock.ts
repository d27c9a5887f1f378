/**
 * Which sandbox a resource belongs to (docs/api.md#sandboxes), kept in its own storage: decided once,
 * at create, by the money that paid for it, and never changed. A sandbox's resource takes the
 * sandbox's clock (the offset of test-clock.ts, set when it joins and moved only by its sandbox),
 * and only that sandbox's money pays for it. The sandbox also says, once, where the resource's deliveries go: their
 * targets, or the sandbox's delivery log (delivery/sandbox-log.ts).
 */
import { AppError } from "../../src/http/errors";
import type { Payer } from "../../src/money/payment";
import type { SandboxDeliveries } from "../../src/rpc/sandbox";
import { orIfMissing } from "./missing-table";
import { moveClockOffsetTo } from "./test-clock";

const TABLE =
  "CREATE TABLE IF NOT EXISTS sandbox_membership (id INTEGER PRIMARY KEY CHECK (id = 1), sandbox_id TEXT " +
  "NOT NULL, deliveries TEXT NOT NULL DEFAULT 'send')";

type Membership = { sandbox_id: string; deliveries?: SandboxDeliveries };

/** The membership row (`SELECT *`: a row written before deliveries had a mode has no such column, and sends). */
function membership(sql: SqlStorage): Membership | null {
  return orIfMissing(
    "sandbox_membership",
    () => sql.exec<Membership>("SELECT * FROM sandbox_membership").toArray()[0] ?? null,
    null,
  );
}

/** The sandbox this object's resource belongs to; null for a real one (and in every object made before sandboxes). */
export function readSandboxId(sql: SqlStorage): string | null {
  return membership(sql)?.sandbox_id ?? null;
}

/** The sandbox whose delivery log takes this resource's requests in place of their targets; null: they are sent. */
export function sandboxLogOf(sql: SqlStorage): string | null {
  const m = membership(sql);
  return m?.deliveries === "log" ? m.sandbox_id : null;
}

/** Makes the resource being created a member of `sandboxId`, starting at the sandbox's clock; answers the offset. */
export function joinSandbox(
  sql: SqlStorage,
  sandboxId: string,
  offsetMs: number,
  deliveries: SandboxDeliveries,
): number {
  sql.exec(TABLE);
  sql.exec("INSERT INTO sandbox_membership (id, sandbox_id, deliveries) VALUES (1, ?, ?)", sandboxId, deliveries);
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
      `This resource is in sandbox ${sandboxId}: only that sandbox's credit token pays for it (send it in ` +
        `X-CREDIT-TOKEN), never x402 or the free tier.`,
    );
  }
}
