/**
 * Test-only faults in a resource's object, so tests show that what a commit obliges is still done
 * when the process dies after it, when the queue refuses or loses a message, or when R2 refuses a
 * delete, and that a direct charge the process dies in is given back. Refused unless ENVIRONMENT is
 * "test" or "development" (the soak injects them under `wrangler dev`, bench/soak-faults/); no route
 * reaches them, only a worker bound to the namespace. Held in the object's memory: an eviction clears
 * them, as it would clear the process they simulate.
 */
import { isDevelopment, type Env } from "../../src/env";
import { AppError } from "../../src/http/errors";
import { RUNTIME_DEATHS, type ResourceFaults } from "../../src/rpc/resource-faults";

export function checkedFaults(env: Env, faults: ResourceFaults): ResourceFaults {
  if (!isDevelopment(env)) throw new Error("Faults can be injected only when ENVIRONMENT is development or test.");
  return { ...faults };
}

/** Uses up one of a counted fault: true when it applies to this call. */
export function takeFault(
  faults: ResourceFaults,
  name: "skipDispatches" | "refuseSends" | "loseSends" | "failDrops",
): boolean {
  const left = faults[name] ?? 0;
  if (left <= 0) return false;
  faults[name] = left - 1;
  return true;
}

/**
 * What a process that dies does: stop. Thrown at an injected point, it runs nothing that would follow;
 * the caller gets a 500, as the worker would when its call into the object is cut.
 */
export class InjectedDeath extends AppError {
  constructor(point: string) {
    // Some points stand for the runtime dying, the worker with it (runtimeDied in src/rpc/resource-faults.ts).
    super("internal_error", `The process died ${point} (injected).`, {
      extra: RUNTIME_DEATHS.has(point as ResourceFaults["dieAt"]) ? { injected_death: "runtime" } : {},
    });
  }
}

/** Stops the call at `point` when that fault is set (then clears it). */
export function dieAt(faults: ResourceFaults, point: NonNullable<ResourceFaults["dieAt"]>): void {
  if (faults.dieAt !== point) return;
  delete faults.dieAt;
  throw new InjectedDeath(point);
}

/** Holds the next prepared call between its two steps (once), as a slow step would. */
export async function pauseAfterPrepare(faults: ResourceFaults): Promise<void> {
  const ms = faults.pauseAfterPrepareMs;
  if (!ms) return;
  delete faults.pauseAfterPrepareMs;
  await new Promise((resolve) => setTimeout(resolve, ms));
}
