/**
 * One move of a sandbox's clock (docs/api.md#sandboxes). Its resources each keep their own clock at
 * the sandbox's offset; moving it moves them step by step in time order: the resource due soonest is
 * moved to that moment and runs what fell due (resource/in-sandbox.ts), so what fires, fires in order
 * across resources, each as its alarm would have run it at that time. Bounded by MAX_FIRINGS_PER_CALL,
 * MAX_STEPS_PER_CALL and MAX_ADVANCE_WALL_MS: where a bound stops it, every resource is left at the
 * last moment stepped to, and the answer says more remains.
 */
import type { Env } from "../../src/env";
import type { AdvanceResult, SandboxEvent, SandboxStep } from "../../src/rpc/sandbox";
import {
  MAX_ADVANCE_WALL_MS,
  MAX_FIRINGS_PER_CALL,
  MAX_RUNS_PER_STEP,
  MAX_STEPS_PER_CALL,
} from "../../src/sandbox/limits";
import { resourceStub } from "../../src/stubs";

export interface ClockMove {
  env: Env;
  sandboxId: string;
  members: string[];
  /** The sandbox's simulated now, and the moment to move it to (Unix ms). */
  from: number;
  to: number;
  offset: number;
  /** Keeps the sandbox's offset as it moves, so a resource that joins meanwhile starts near it. */
  saveOffset(offset: number): void;
  record(events: SandboxEvent[]): void;
  /** Events resources reported meanwhile, outside the steps (a delivery's attempt, a logged request), taken once. */
  arrived(): SandboxEvent[];
  gone(resourceId: string): void;
}

export async function moveClock(m: ClockMove): Promise<AdvanceResult> {
  const started = Date.now();
  const fired: SandboxEvent[] = [];
  /**
   * Events not yet written: a step's firings and what arrived meanwhile. An attempt is stamped when its answer came, a
   * moment after the step that sent it, so events are held until the clock has passed them and written in time order.
   */
  let held: SandboxEvent[] = [];
  const write = (upTo: number) => {
    held.push(...m.arrived());
    held.sort((a, b) => a.at - b.at); // stable: the same moment keeps the order things fired in
    const ready = held.filter((e) => e.at <= upTo);
    held = held.filter((e) => e.at > upTo);
    if (ready.length) {
      m.record(ready);
      fired.push(...ready);
    }
  };
  /** Each resource still here, and when it is next due on its clock (null: nothing waits). */
  const next = new Map<string, number | null>();
  let offset = m.offset;
  const step = async (resourceId: string): Promise<void> => {
    const result: SandboxStep = await resourceStub(m.env, resourceId).sandboxStep({
      sandboxId: m.sandboxId,
      offsetMs: offset,
      maxRuns: MAX_RUNS_PER_STEP,
    });
    held.push(...result.fired);
    if (result.present) next.set(resourceId, result.next);
    else {
      next.delete(resourceId);
      m.gone(resourceId);
    }
  };
  const moveTo = (at: number) => {
    offset = Math.max(offset, at - Date.now());
    m.saveOffset(offset);
  };

  // Each resource first catches up with the sandbox's now (and says when it is next due).
  for (const id of m.members) await step(id);
  let reached = m.to;
  let last = m.from;
  let more = false;
  for (let steps = 0; ; steps++) {
    const [id, at] = soonest(next);
    if (id === null || at > m.to) break;
    if (
      fired.length + held.length >= MAX_FIRINGS_PER_CALL ||
      steps >= MAX_STEPS_PER_CALL ||
      Date.now() - started >= MAX_ADVANCE_WALL_MS
    ) {
      more = true;
      reached = last;
      break;
    }
    moveTo(at);
    write(at);
    await step(id);
    last = Math.max(last, at);
  }
  // Every resource reaches where the clock stopped, the ones with nothing due on the way too.
  moveTo(reached);
  for (const id of [...next.keys()]) await step(id);
  write(Infinity);
  return { from: m.from, to: m.to, reached, more, fired };
}

function soonest(next: Map<string, number | null>): [string | null, number] {
  let found: string | null = null;
  let at = Infinity;
  for (const [id, due] of next) {
    if (due !== null && due < at) {
      found = id;
      at = due;
    }
  }
  return [found, at];
}
