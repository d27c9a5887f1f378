/**
 * The SandboxObject's RPC surface and the data a sandbox's resources hand it (docs/api.md#sandboxes).
 * Declared here, in src/, and implemented by durable-objects/SandboxObject.ts, so the worker never
 * imports the object; the ResourceObject's side of a sandbox (its clock, its steps) is in rpc/resource.ts.
 */
import type { Result } from "../http/errors";
import type { Json } from "../json";
import type { Credential } from "./account";

/** One thing that happened in a sandbox, at its simulated time (Unix ms). */
export type SandboxEvent = {
  at: number;
  /** The resource it happened to; null for the sandbox's own events (made, clock moved, ended). */
  resource_id: string | null;
  kind: string | null;
  /** created · timer · delivery · expired · ended · clock · sandbox_created · sandbox_ended */
  type: string;
  detail: Json;
};

/** What one step of the sandbox's clock did in one resource: its firings, its clock, and when it is next due. */
export interface SandboxStep {
  /** False: no resource of this sandbox is here (it ended, or its creation was undone). */
  present: boolean;
  /** The resource's time after the step (Unix ms). */
  now: number;
  /** When its alarm is next due, on its clock; null: nothing waits. */
  next: number | null;
  fired: SandboxEvent[];
}

export interface SandboxView {
  id: string;
  label: string | null;
  state: "active" | "ended";
  created_at: number;
  /** Real time: the sandbox ends then, with every resource in it. */
  expires_at: number;
  /** The sandbox's simulated now. */
  now: number;
  offset_ms: number;
  resources: { id: string; kind: string }[];
  events: number;
}

export interface AdvanceResult {
  from: number;
  to: number;
  /** Where the clock stopped: `to`, or earlier when the firing limit stopped it (`more`). */
  reached: number;
  more: boolean;
  fired: SandboxEvent[];
}

export type ClockTarget = { to: number } | { by: number };

export interface SandboxApi {
  /** Makes the sandbox: its money is the account `accountId` (opened by the caller). */
  open(input: {
    id: string;
    accountId: string;
    tokenId: string;
    label: string | null;
    ttlMs: number;
  }): Promise<Result<SandboxView>>;
  view(cred: Credential): Promise<Result<SandboxView>>;
  /** A resource paid with the sandbox's money joins it: answers the clock offset it starts with. */
  join(input: { resourceId: string; kind: string }): Promise<Result<{ offsetMs: number }>>;
  /** Moves the clock to `to`, or `by` ms, from its now (Unix ms). */
  /** What a resource's own alarm fired between moves, for the timeline (a member's only). */
  record(input: { resourceId: string; events: SandboxEvent[] }): Promise<void>;
  advance(input: Credential & ClockTarget): Promise<Result<AdvanceResult>>;
  timeline(
    input: Credential & { after: number; limit: number },
  ): Promise<Result<{ items: SandboxEvent[]; next_cursor: number | null }>>;
  end(cred: Credential): Promise<Result<SandboxView>>;
}
