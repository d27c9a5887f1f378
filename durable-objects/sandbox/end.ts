/**
 * A sandbox's end (docs/api.md#sandboxes): every resource ended, then its account closed, resumed by the alarm
 * when a step fails; then the tombstone (SandboxObject's alarm deletes it).
 */
import type { Env } from "../../src/env";
import { AppError } from "../../src/http/errors";
import { accountStub, resourceStub } from "../../src/stubs";
import type { SandboxStore } from "./store";

/** An ended sandbox answers 410 this long, then 404 (its token authenticates nothing once its account is closed). */
export const TOMBSTONE_MS = 86_400_000;
/** An end that failed part-way (a resource unreachable) is tried again this much later. */
const RETRY_END_MS = 60_000;

/**
 * Ends every resource, then closes the account (its token then pays nothing and authenticates
 * nothing). Recorded first, so no resource joins meanwhile; a step that fails is tried again by the alarm.
 */
export async function endSandbox(env: Env, storage: DurableObjectStorage, store: SandboxStore): Promise<void> {
  const row = store.row()!;
  const now = Date.now();
  if (row.ended_at === null) store.markEnded(now);
  try {
    for (const m of store.members()) {
      await resourceStub(env, m.resource_id).sandboxEnd(row.sandbox_id);
      store.markGone(m.resource_id);
    }
    await accountStub(env, row.account_id).void();
    await env.DB.prepare("UPDATE credit_tokens SET expires_at = min(expires_at, ?) WHERE account_id = ?")
      .bind(now, row.account_id)
      .run();
  } catch (err) {
    console.error(`sandbox ${row.sandbox_id}: end left to the alarm`, err);
    await storage.setAlarm(now + RETRY_END_MS);
    throw new AppError("internal_error", "The sandbox's end did not finish; it is resumed within a minute.");
  }
  if (row.ended_at === null)
    store.record([{ at: now + row.offset_ms, resource_id: null, kind: null, type: "sandbox_ended", detail: {} }]);
  await storage.setAlarm((row.ended_at ?? now) + TOMBSTONE_MS);
}
