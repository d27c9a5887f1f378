/**
 * Test-only faults in a resource's outbox (refused unless ENVIRONMENT is "test"), so tests
 * show that what a commit obliges is still done when the process dies after it, when the queue
 * refuses or loses a message, or when R2 refuses a delete. Held in the object's memory: an
 * eviction clears them, as it would clear the process they simulate.
 */
import type { Env } from "../../src/env";
import type { OutboxFaults } from "../../src/rpc/resource";


export function checkedFaults(env: Env, faults: OutboxFaults): OutboxFaults {
  if (env.ENVIRONMENT !== "test") throw new Error("Delivery faults can be injected only when ENVIRONMENT is test.");
  return { ...faults };
}

/** Uses up one of a counted fault: true when it applies to this call. */
export function takeFault(faults: OutboxFaults, name: "skipDispatches" | "refuseSends" | "loseSends" | "failDrops"): boolean {
  const left = faults[name] ?? 0;
  if (left <= 0) return false;
  faults[name] = left - 1;
  return true;
}
