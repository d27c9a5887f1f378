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
  /**
   * created · timer · delivery · attempt · logged · expired · cancelled · clock · sandbox_created ·
   * sandbox_ended
   */
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

/**
 * Where a sandbox's resources' deliveries go: to their targets, or (`log`) into the sandbox's own delivery log instead
 * (docs/api.md#sandboxes).
 */
export type SandboxDeliveries = "send" | "log";

/**
 * A request a sandbox's resource would have sent, as its delivery log keeps it: headers whose values could be secrets
 * masked, and the body, or its digest when it is large or stored, or neither when it is a secret.
 */
export interface LoggedRequest {
  resource_id: string;
  delivery_id: string;
  event_type: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  /** The text body when it is short, plain and not a secret; else null. */
  body: string | null;
  body_bytes: number | null;
  /** Hex SHA-256 of the body's bytes; null for no body, or a secret one. */
  body_sha256: string | null;
  /** True when the body (or the whole request) is a secret: neither its bytes nor a digest are kept. */
  body_withheld: boolean;
}

/** A logged request with its place in the log and its simulated time (Unix ms). */
export type LoggedDelivery = LoggedRequest & { seq: number; at: number };

export interface SandboxView {
  id: string;
  label: string | null;
  deliveries: SandboxDeliveries;
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
    deliveries: SandboxDeliveries;
  }): Promise<Result<SandboxView>>;
  view(cred: Credential): Promise<Result<SandboxView>>;
  /** A resource paid with the sandbox's money joins it: answers the clock offset it starts with. */
  join(input: {
    resourceId: string;
    kind: string;
  }): Promise<Result<{ offsetMs: number; deliveries: SandboxDeliveries }>>;
  /**
   * What a resource fired outside a clock move's steps (its own alarm, a delivery's attempt), for the timeline (a
   * member's only).
   */
  record(input: { resourceId: string; events: SandboxEvent[] }): Promise<void>;
  /** The delivery pipeline's send, for a sandbox whose deliveries go to its log: answers the entry's number. */
  logDelivery(request: LoggedRequest): Promise<Result<{ seq: number }>>;
  /** Moves the clock to `to`, or `by` ms, from its now (Unix ms). */
  advance(input: Credential & ClockTarget): Promise<Result<AdvanceResult>>;
  deliveries(
    input: Credential & { after: number; limit: number },
  ): Promise<Result<{ items: LoggedDelivery[]; next_cursor: number | null }>>;
  timeline(
    input: Credential & { after: number; limit: number },
  ): Promise<Result<{ items: SandboxEvent[]; next_cursor: number | null }>>;
  end(cred: Credential): Promise<Result<SandboxView>>;
}
