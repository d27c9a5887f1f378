/**
 * One per resource: the kind's state in SQLite, the alarm for TTL expiry and
 * billing settlement, and the data-plane dispatch to the kind's engine.
 * Data-plane calls paid with a credit token are charged here, against a hold
 * (resource/billing.ts), in the same transaction as the work: a refused or
 * failed call never reaches the ledger.
 *
 * This class is the RPC surface; each method authorizes where it must and delegates to a part with its own state,
 * in resource/: the meta row and the token checks (meta-cell.ts), the clock (clock.ts), the outbox of sends and R2
 * deletes (outbox.ts), billing's holds and group commit (billing.ts), how a kind's code runs (work.ts), a kind's
 * operations (operations.ts), the public address (public-address.ts), what passes between resources
 * (between-resources.ts), the resource's life: create, extend, end (lifecycle.ts, creation.ts), its side of a sandbox
 * (in-sandbox.ts), and the one alarm (alarm.ts); parts.ts makes them and wires them together.
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../src/env";
import { capture, type Result } from "../src/http/errors";
import { loadKind, requireKind } from "../src/resources/kinds";
import { loadSealing } from "../src/auth/sealing-loader";
import type { PublicAnswer } from "../src/kind/public-face";
import type { Json } from "../src/json";
import type {
  AdoptedObject,
  CreateInput,
  DeliveryReport,
  MintTokenInput,
  OpInput,
  TokenView,
  PublicBodyIntent,
  PublicInput,
  PublicSettled,
  RelayInput,
  ResourceApi,
} from "../src/rpc/resource";
import type { ResourceFaults } from "../src/rpc/resource-faults";
import type { Payer } from "../src/money/payment";
import type { RecordCore } from "./resource/meta";
import type { MetaCell } from "./resource/meta-cell";
import type { ResourceClock } from "./resource/clock";
import type { ResourceOutbox } from "./resource/outbox";
import type { Billing } from "./resource/billing";
import type { ResourceWork } from "./resource/work";
import type { ResourceLifecycle } from "./resource/lifecycle";
import type { ResourceOperations } from "./resource/operations";
import type { PublicAddress } from "./resource/public-address";
import type { BetweenResources } from "./resource/between-resources";
import type { ResourceAlarm } from "./resource/alarm";
import type { ResourceInSandbox } from "./resource/in-sandbox";
import { resourceParts } from "./resource/parts";
import { migrateResource } from "./resource/migrations";
import { checkedFaults } from "./resource/test-faults";
import type { SandboxStep } from "../src/rpc/sandbox";

export class ResourceObject extends DurableObject<Env> implements ResourceApi {
  private readonly meta: MetaCell;
  private readonly clock: ResourceClock;
  private readonly outbox: ResourceOutbox;
  private readonly work: ResourceWork;
  private readonly lifecycle: ResourceLifecycle;
  private readonly operations: ResourceOperations;
  private readonly publicAddress: PublicAddress;
  private readonly betweenResources: BetweenResources;
  private readonly sandbox: ResourceInSandbox;
  private readonly alarms: ResourceAlarm;
  private readonly billing: () => Billing;
  /**
   * Test-only faults (injectFaults, ENVIRONMENT=test; resource/test-faults.ts), in memory as the process they stand
   * for.
   */
  private readonly faults: ResourceFaults = {};

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const storage = ctx.storage;
    // The parts and what each is for: resource/parts.ts.
    const parts = resourceParts(ctx, env, this.faults, () => this.alarm());
    this.meta = parts.meta;
    this.clock = parts.clock;
    this.outbox = parts.outbox;
    this.work = parts.work;
    this.lifecycle = parts.lifecycle;
    this.operations = parts.operations;
    this.publicAddress = parts.publicAddress;
    this.betweenResources = parts.betweenResources;
    this.sandbox = parts.sandbox;
    this.alarms = parts.alarms;
    this.billing = parts.billing;
    // Tables made by older code are brought up to date before anything is served. First the kind's module
    // and AES are loaded: what follows reaches them synchronously, inside transactions (resources/kinds.ts
    // requireKind, auth/sealing-loader.ts).
    ctx
      .blockConcurrencyWhile(async () => {
        await loadSealing();
        const meta = this.meta.get();
        if (meta) await loadKind(meta.kind);
        migrateResource(storage, this.meta);
        await this.clock.load();
      })
      .catch((err) => console.error("resource object did not start", err));
  }

  create(input: CreateInput): Promise<Result<RecordCore>> {
    return this.lifecycle.create(input);
  }

  /** The worker settled the x402 payment of this resource's create: it is paid for, and stays. */
  settledCreate(requestId: string): Promise<Result<null>> {
    return this.lifecycle.settledCreate(requestId);
  }

  /** Its sandbox moves the clock of a sandbox's resource and runs what fell due (resource/in-sandbox.ts). */
  sandboxStep(input: { sandboxId: string; offsetMs: number; maxRuns: number }): Promise<SandboxStep> {
    return this.sandbox.sandboxStep(input);
  }

  /** Its sandbox ended: the resource ends with it. */
  sandboxEnd(sandboxId: string): Promise<boolean> {
    return this.sandbox.sandboxEnd(sandboxId);
  }

  /** Moves expires_at by `ttlSeconds`, charging `priceMicro` (the worker priced it from the registry). */
  extend(input: {
    mgmtHash: string;
    ttlSeconds: number;
    priceMicro: number;
    payer: Payer;
    requestId: string;
  }): Promise<Result<RecordCore>> {
    return this.lifecycle.extend(input);
  }

  status(mgmtHash: string): Promise<Result<RecordCore>> {
    return capture(() => this.work.record(this.meta.authorize(mgmtHash, { name: "get_resource" }), "active"));
  }

  exportAll(mgmtHash: string): Promise<Result<{ resource: RecordCore; data: Json }>> {
    return capture(() => {
      const meta = this.meta.authorize(mgmtHash, { name: "export_resource" });
      const kind = requireKind(meta.kind);
      return {
        resource: this.work.record(meta, "active"),
        data: kind.exportData(this.work.store(meta), this.meta.config(meta)),
      };
    });
  }

  cancel(mgmtHash: string): Promise<Result<RecordCore>> {
    return capture(async () =>
      this.lifecycle.end(this.meta.authorize(mgmtHash, { name: "cancel_resource" }), "cancelled"),
    );
  }

  /** A kind's operation (resource/operations.ts). `body`: the raw request bytes of a rawBody operation. */
  op(input: OpInput, body: ReadableStream<Uint8Array> | null = null): Promise<Result<Json>> {
    return capture(() => this.operations.run(input, body));
  }

  /** Before the worker stores a large public body (resource/public-address.ts). */
  intendPublicBody(input: PublicBodyIntent): Promise<Result<null>> {
    return capture(() => this.publicAddress.intendBody(input));
  }

  /** A request to the resource's public address: free, no credentials (resource/public-address.ts). */
  publicRequest(input: PublicInput): Promise<Result<PublicAnswer>> {
    return capture(() => this.publicAddress.request(input));
  }

  publicSettled(input: PublicSettled): Promise<Result<null>> {
    return capture(() => this.publicAddress.settled(input));
  }

  /** The operator disabled (or enabled again) this resource's public address: mirrored here, so no hit reads D1. */
  setPublicDisabled(input: { publicId: string; disabled: boolean }): Promise<Result<boolean>> {
    return capture(() => this.publicAddress.setDisabled(input));
  }

  /** A message another resource relayed here (resource/between-resources.ts). */
  relay(input: RelayInput): Promise<Result<null>> {
    return capture(() => this.betweenResources.relay(input));
  }

  /** What this resource shares with another of its owner's (a link serving a blob's bytes). */
  sharedObject(): Promise<Result<{ key: string } | null>> {
    return capture(() => this.betweenResources.shared());
  }

  /** Takes bytes another of its owner's resources wrote below this one's prefix (a transfer's copy). */
  adoptObject(input: AdoptedObject): Promise<Result<null>> {
    return capture(() => this.betweenResources.adopt(input));
  }

  /** The account asks for its held money back (to report an exact balance, or because it ran short). */
  flushBilling(): Promise<Result<null>> {
    return capture(async () => {
      if (this.meta.get()) await this.billing().flush("all");
      return null;
    });
  }

  /** The one alarm (resource/alarm.ts): runs are one at a time; the runtime retries one that throws. */
  override alarm(): Promise<void> {
    return this.alarms.run();
  }

  /**
   * Test only (ENVIRONMENT=test): moves this resource's clock `ms` ahead and answers its now, having run what fell
   * due (`runDue` false leaves it to the alarm, armed for now).
   */
  advanceClock(ms: number, runDue = true): Promise<number> {
    return this.alarms.advanceClock(ms, runDue);
  }

  /**
   * The consumer of the DELIVERIES queue reports each attempt here (nothing to do once the resource is gone).
   * Answers whether the reporting message should go on retrying.
   */
  async recordDelivery(report: DeliveryReport): Promise<boolean> {
    const goOn = await this.work.settleDelivery(report);
    await this.sandbox.attemptReported(report); // a sandbox's timeline shows each attempt
    return goOn;
  }

  mintToken(input: MintTokenInput): Promise<Result<TokenView>> {
    return capture(() => {
      const { meta, grant } = this.meta.authorizeCall(input.mgmtHash, { name: "tokens" });
      return this.meta.grants.mint(grant, requireKind(meta.kind), input, this.clock.now(), meta.expires_at);
    });
  }

  listTokens(input: {
    mgmtHash: string;
    limit: number;
    cursor: string | null;
  }): Promise<Result<{ items: TokenView[]; next_cursor: string | null }>> {
    return capture(() =>
      this.meta.grants.list(
        this.meta.authorizeCall(input.mgmtHash, { name: "tokens" }).grant?.tokenId ?? null,
        input.limit,
        input.cursor,
      ),
    );
  }

  revokeToken(input: { mgmtHash: string; tokenId: string }): Promise<Result<{ token_id: string; revoked: string[] }>> {
    return capture(() => {
      const { grant } = this.meta.authorizeCall(input.mgmtHash, { name: "tokens" });
      return {
        token_id: input.tokenId,
        revoked: this.meta.grants.revoke(grant?.tokenId ?? null, input.tokenId, this.clock.now()),
      };
    });
  }

  /** Test only (ENVIRONMENT=test): faults in this resource's object (resource/test-faults.ts). */
  injectFaults(faults: ResourceFaults): void {
    Object.assign(this.faults, checkedFaults(this.env, faults));
  }

  listDeliveries(input: {
    mgmtHash: string;
    kind: string;
    limit: number;
    cursor: string | null;
  }): Promise<Result<{ items: Json[]; next_cursor: string | null }>> {
    return capture(() => {
      this.meta.authorizeKind(input.mgmtHash, input.kind, { name: "list_deliveries" });
      return this.outbox.deliveries.list(input.limit, input.cursor);
    });
  }

  retryDelivery(input: { mgmtHash: string; kind: string; deliveryId: string }): Promise<Result<Json>> {
    return capture(() =>
      this.work.retryDelivery(
        this.meta.authorizeKind(input.mgmtHash, input.kind, { name: "retry_delivery" }).meta,
        input.deliveryId,
      ),
    );
  }

  /** The operator sends a dead delivery again (after an outage of its own), without the owner's token. */
  operatorRetryDelivery(deliveryId: string): Promise<Result<Json>> {
    return capture(() => this.work.retryDelivery(this.meta.stillHere(), deliveryId));
  }
}
