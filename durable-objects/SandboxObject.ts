/**
 * One per sandbox (docs/api.md#sandboxes): its clock, the resources its money made, and its
 * timeline. The resources keep their own clocks at the sandbox's offset and run their own work;
 * this object moves them (sandbox/clock-move.ts), records what fired, and ends them all when the
 * sandbox ends (its real-time TTL, or its owner), then closes its account.
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../src/env";
import { AppError, capture, unwrap, type Result } from "../src/http/errors";
import type { Credential } from "../src/rpc/account";
import type {
  AdvanceResult,
  ClockTarget,
  LoggedDelivery,
  LoggedRequest,
  SandboxApi,
  SandboxDeliveries,
  SandboxEvent,
  SandboxView,
} from "../src/rpc/sandbox";
import { SANDBOX_MAX_RESOURCES } from "../src/sandbox/limits";
import { accountStub } from "../src/stubs";
import { moveClock } from "./sandbox/clock-move";
import { clockTarget } from "./sandbox/clock-target";
import { endSandbox, TOMBSTONE_MS } from "./sandbox/end";
import { iso } from "../src/time";
import { migrateSandbox, SandboxStore, type SandboxRow } from "./sandbox/store";
import { ended, sandboxView } from "./sandbox/view";

export class SandboxObject extends DurableObject<Env> implements SandboxApi {
  private readonly store: SandboxStore;
  /** Set while a clock move runs: a second one at the same time is refused, not interleaved. */
  private moving = false;
  /**
   * While a clock move runs, what resources report meanwhile (a delivery's attempt, a logged request) joins its events
   * here, so the move writes the timeline in time order (sandbox/clock-move.ts).
   */
  private arrived: SandboxEvent[] | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new SandboxStore(ctx.storage.sql);
    void ctx.blockConcurrencyWhile(async () => {
      migrateSandbox(ctx.storage.sql);
    });
  }

  open(input: {
    id: string;
    accountId: string;
    tokenId: string;
    label: string | null;
    ttlMs: number;
    deliveries: SandboxDeliveries;
  }): Promise<Result<SandboxView>> {
    return capture(async () => {
      if (this.store.row()) throw new AppError("conflict", "This sandbox already exists.");
      const now = Date.now();
      const row: SandboxRow = {
        sandbox_id: input.id,
        account_id: input.accountId,
        token_id: input.tokenId,
        label: input.label,
        created_at: now,
        expires_at: now + input.ttlMs,
        offset_ms: 0,
        ended_at: null,
        deliveries: input.deliveries,
      };
      this.ctx.storage.transactionSync(() => {
        this.store.insert(row);
        this.store.record([
          {
            at: now,
            resource_id: null,
            kind: null,
            type: "sandbox_created",
            detail: { expires_at: iso(row.expires_at), deliveries: row.deliveries },
          },
        ]);
      });
      await this.ctx.storage.setAlarm(row.expires_at);
      return this.viewOf(row);
    });
  }

  view(cred: Credential): Promise<Result<SandboxView>> {
    return capture(async () => this.viewOf(await this.authenticated(cred)));
  }

  join(input: {
    resourceId: string;
    kind: string;
  }): Promise<Result<{ offsetMs: number; deliveries: SandboxDeliveries }>> {
    return capture(() => {
      const row = this.active();
      if (this.store.members().length >= SANDBOX_MAX_RESOURCES) {
        throw new AppError(
          "conflict",
          `Sandbox ${row.sandbox_id} holds ${SANDBOX_MAX_RESOURCES} resources, its most: cancel one first; ` +
            `nothing was charged.`,
        );
      }
      this.ctx.storage.transactionSync(() => {
        this.store.addMember(input.resourceId, input.kind);
        this.store.record([
          {
            at: Date.now() + row.offset_ms,
            resource_id: input.resourceId,
            kind: input.kind,
            type: "created",
            detail: {},
          },
        ]);
      });
      return { offsetMs: row.offset_ms, deliveries: row.deliveries };
    });
  }

  async record(input: { resourceId: string; events: SandboxEvent[] }): Promise<void> {
    if (!this.store.isMember(input.resourceId)) return;
    this.arrive(input.events.filter((e) => e.resource_id === input.resourceId));
  }

  /**
   * Where the delivery pipeline sends a request of a sandbox whose deliveries go to its log (delivery/sandbox-log.ts):
   * kept at the sandbox's now, and shown in the timeline. An ended sandbox (or a resource no longer in it) takes none.
   */
  logDelivery(request: LoggedRequest): Promise<Result<{ seq: number }>> {
    return capture(() => {
      const row = this.active();
      const kind = this.store.memberKind(request.resource_id);
      if (kind === null) throw new AppError("not_found", `Resource ${request.resource_id} is not in this sandbox.`);
      const at = Date.now() + row.offset_ms;
      const seq = this.store.logDelivery(at, request);
      const { delivery_id, event_type, method, url } = request;
      this.arrive([
        {
          at,
          resource_id: request.resource_id,
          kind,
          type: "logged",
          detail: { delivery_id, event_type, method, url, log_seq: seq },
        },
      ]);
      return { seq };
    });
  }

  deliveries(
    input: Credential & { after: number; limit: number },
  ): Promise<Result<{ items: LoggedDelivery[]; next_cursor: number | null }>> {
    return capture(async () => {
      await this.authenticated(input);
      const page = this.store.loggedDeliveries(input.after, input.limit);
      return { items: page.items, next_cursor: page.next };
    });
  }

  /** Into the timeline now, or, while a move runs, into the move's events, which it writes in time order. */
  private arrive(events: SandboxEvent[]): void {
    if (this.arrived) this.arrived.push(...events);
    else this.store.record(events);
  }

  advance(input: Credential & ClockTarget): Promise<Result<AdvanceResult>> {
    return capture(async () => {
      const row = await this.authenticated(input);
      if (this.moving)
        throw new AppError(
          "conflict",
          "This sandbox's clock is being moved by another call; wait for its answer, then move it again.",
        );
      const from = Date.now() + row.offset_ms;
      const to = clockTarget(input, from);
      this.moving = true;
      this.arrived = [];
      try {
        const moved = await moveClock({
          env: this.env,
          sandboxId: row.sandbox_id,
          members: this.store.members().map((m) => m.resource_id),
          from,
          to,
          offset: row.offset_ms,
          saveOffset: (offset) => this.store.setOffset(offset),
          record: (events) => this.store.record(events),
          arrived: () => this.arrived?.splice(0) ?? [],
          gone: (id) => this.store.markGone(id),
        });
        this.store.record([
          {
            at: moved.reached,
            resource_id: null,
            kind: null,
            type: "clock",
            detail: { from: iso(from), to: iso(moved.reached), fired: moved.fired.length, more: moved.more },
          },
        ]);
        return moved;
      } finally {
        this.moving = false;
        // What came in after the move's last write (an attempt that outlived its wait) is written as it comes.
        const late = this.arrived ?? [];
        this.arrived = null;
        this.store.record(late);
      }
    });
  }

  timeline(
    input: Credential & { after: number; limit: number },
  ): Promise<Result<{ items: SandboxEvent[]; next_cursor: number | null }>> {
    return capture(async () => {
      await this.authenticated(input);
      const page = this.store.events(input.after, input.limit);
      return { items: page.items, next_cursor: page.next };
    });
  }

  end(cred: Credential): Promise<Result<SandboxView>> {
    return capture(async () => {
      await this.authenticated(cred);
      await this.endAll();
      return this.viewOf(this.store.row()!);
    });
  }

  /** The sandbox's real-time end, an end to resume, or the tombstone's. */
  override async alarm(): Promise<void> {
    const row = this.store.row();
    if (!row) return;
    if (row.ended_at !== null && Date.now() >= row.ended_at + TOMBSTONE_MS) {
      await this.ctx.storage.deleteAll();
      return;
    }
    if (Date.now() >= row.expires_at || row.ended_at !== null) await this.endAll();
    else await this.ctx.storage.setAlarm(row.expires_at);
  }

  // ---- internals ----

  /** Ends every resource, then closes the account; a step that fails is tried again by the alarm (sandbox/end.ts). */
  private async endAll(): Promise<void> {
    await endSandbox(this.env, this.ctx.storage, this.store);
  }

  private active(): SandboxRow {
    const row = this.store.row();
    if (!row) throw new AppError("not_found", "No such sandbox.");
    if (row.ended_at !== null || Date.now() >= row.expires_at) throw ended(row);
    return row;
  }

  /** The sandbox, for a caller who holds its money (its credit token, or a sub-token of it). */
  private async authenticated(cred: Credential): Promise<SandboxRow> {
    const row = this.active();
    unwrap(await accountStub(this.env, row.account_id).authenticate(cred));
    return row;
  }

  private viewOf(row: SandboxRow): SandboxView {
    return sandboxView(row, this.store);
  }
}
