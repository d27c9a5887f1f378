/**
 * One per resource: the kind's state in SQLite, its alarm for TTL expiry, and
 * the data-plane dispatch to the kind's engine. Paid work charges the account
 * from here, between checking the management token and doing the work, so a
 * refused call never reaches the ledger and a failed one is refunded.
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../src/env";
import { AppError, capture, unwrap, type Result } from "../src/http/errors";
import { digestsEqual } from "../src/auth/ids";
import { findKind } from "../src/resources/registry";
import type { AnyKind, EngineStore } from "../src/resources/kind";
import type { Payer } from "../src/money/payment";
import { accountStub } from "../src/stubs";
import type { Json } from "../src/json";
import { endResourceIndex, insertResourceIndex, updateResourceExpiry } from "../src/resources/index-table";
import { META_TABLE, recordOf, type MetaRow, type RecordCore, type ResourceState } from "./resource-meta";

export interface CreateInput {
  id: string;
  kind: string;
  owner: string;
  mgmtHash: string;
  label: string | null;
  notifyUrl: string | null;
  /** The kind's validated config, as JSON text (stored as is). */
  configJson: string;
  ttlSeconds: number;
  priceMicro: number;
  payer: Payer;
  requestId: string;
}

export interface OpInput {
  mgmtHash: string;
  kind: string;
  op: string;
  input: Json;
  priceMicro: number;
  payer: Payer;
  requestId: string;
}

const ROLLBACK = Symbol("rollback");

export class ResourceObject extends DurableObject<Env> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
  }

  create(input: CreateInput): Promise<Result<RecordCore>> {
    return capture(async () => {
      if (this.meta()) throw new AppError("conflict", "This resource already exists.");
      const kind = this.kindOf(input.kind);
      const now = Date.now();
      const meta: MetaRow = {
        id: input.id, kind: input.kind, owner: input.owner, mgmt_hash: input.mgmtHash, label: input.label,
        notify_url: input.notifyUrl, config: input.configJson, created_at: now,
        expires_at: now + input.ttlSeconds * 1000, charged: input.priceMicro,
      };
      const chargeId = await this.charge(input.payer, input.priceMicro, `${input.kind}.create`, input.id, input.requestId);
      try {
        this.ctx.storage.transactionSync(() => {
          this.sql.exec(META_TABLE);
          this.sql.exec(
            "INSERT INTO resource_meta VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            meta.id, meta.kind, meta.owner, meta.mgmt_hash, meta.label, meta.notify_url, meta.config, meta.created_at, meta.expires_at, meta.charged,
          );
          kind.init(this.store(meta, now), JSON.parse(input.configJson));
        });
        await insertResourceIndex(this.env.DB, meta);
        await this.ctx.storage.setAlarm(meta.expires_at);
      } catch (err) {
        await this.ctx.storage.deleteAll();
        await this.refund(input.payer, chargeId, input.requestId);
        throw err;
      }
      return this.record(meta, "active");
    });
  }

  status(mgmtHash: string): Promise<Result<RecordCore>> {
    return capture(() => this.record(this.authorize(mgmtHash), "active"));
  }

  /** Moves expires_at by `ttlSeconds`, charging `priceMicro` (the worker priced it from the registry). */
  extend(input: { mgmtHash: string; ttlSeconds: number; priceMicro: number; payer: Payer; requestId: string }): Promise<Result<RecordCore>> {
    return capture(async () => {
      const meta = this.authorize(input.mgmtHash);
      const kind = this.kindOf(meta.kind);
      const expiresAt = meta.expires_at + input.ttlSeconds * 1000;
      const limit = Date.now() + kind.maxTtlSeconds * 1000;
      if (expiresAt > limit) {
        const most = Math.max(0, Math.floor((limit - meta.expires_at) / 1000));
        throw new AppError("validation_failed", `A ${meta.kind} lives at most ${kind.maxTtlSeconds} s from now; it can be extended by ${most} s at most.`, {
          errors: [{ path: "ttl_seconds", message: `must be at most ${most}` }],
        });
      }
      const chargeId = await this.charge(input.payer, input.priceMicro, `${meta.kind}.extend`, meta.id, input.requestId);
      const current = this.meta();
      if (!current) {
        await this.refund(input.payer, chargeId, input.requestId);
        throw new AppError("not_found", "The resource ended while it was being extended.");
      }
      const newExpiry = current.expires_at + input.ttlSeconds * 1000;
      this.sql.exec("UPDATE resource_meta SET expires_at = ?, charged = charged + ?", newExpiry, input.priceMicro);
      await this.ctx.storage.setAlarm(newExpiry);
      await updateResourceExpiry(this.env.DB, meta.id, newExpiry);
      return this.record(this.meta()!, "active");
    });
  }

  exportAll(mgmtHash: string): Promise<Result<{ resource: RecordCore; data: Json }>> {
    return capture(() => {
      const meta = this.authorize(mgmtHash);
      const kind = this.kindOf(meta.kind);
      return { resource: this.record(meta, "active"), data: kind.exportData(this.store(meta), JSON.parse(meta.config)) };
    });
  }

  cancel(mgmtHash: string): Promise<Result<RecordCore>> {
    return capture(async () => this.end(this.authorize(mgmtHash), "cancelled"));
  }

  op(input: OpInput): Promise<Result<Json>> {
    return capture(async () => {
      const meta = this.authorize(input.mgmtHash);
      if (meta.kind !== input.kind) throw new AppError("not_found", `${meta.id} is not a ${input.kind} resource.`);
      const op = this.kindOf(meta.kind).ops.find((o) => o.name === input.op);
      if (!op) throw new AppError("not_found", `Unknown operation ${input.op}.`);
      const config = JSON.parse(meta.config) as unknown;
      const apply = () => {
        const store = this.store(meta);
        const out = op.run(store, config, input.input);
        if (input.priceMicro) this.sql.exec("UPDATE resource_meta SET charged = charged + ?", input.priceMicro);
        return out;
      };
      if (input.payer.type === "prepaid" || input.priceMicro === 0) return this.ctx.storage.transactionSync(apply);

      // Dry run first so that a refused operation (a bound crossed, a CAS lost) is never charged.
      this.dryRun(apply);
      const chargeId = await this.charge(input.payer, input.priceMicro, `${meta.kind}.${op.name}`, meta.id, input.requestId);
      try {
        if (!this.meta()) throw new AppError("not_found", "The resource ended during the operation.");
        return this.ctx.storage.transactionSync(apply);
      } catch (err) {
        await this.refund(input.payer, chargeId, input.requestId);
        throw err;
      }
    });
  }

  /** TTL expiry. Alarms are retried by the runtime if this throws, so cleanup is never skipped. */
  override async alarm(): Promise<void> {
    const meta = this.meta();
    if (!meta) return;
    if (Date.now() < meta.expires_at) {
      await this.ctx.storage.setAlarm(meta.expires_at);
      return;
    }
    await this.end(meta, "expired");
  }

  // ---- internals ----

  /** Deletes every byte the resource held (R2 prefix, all storage), leaving the D1 tombstone. */
  private async end(meta: MetaRow, state: Exclude<ResourceState, "active">): Promise<RecordCore> {
    const record = this.record(meta, state);
    await deletePrefix(this.env.BUCKET, `${meta.id}/`);
    await endResourceIndex(this.env.DB, meta.id, state, Date.now());
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    return record;
  }

  private meta(): MetaRow | null {
    const exists = this.sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'resource_meta'").toArray().length;
    if (!exists) return null;
    return this.sql.exec<MetaRow>("SELECT * FROM resource_meta").toArray()[0] ?? null;
  }

  /** Not found here means never created or already ended: the worker then consults the D1 tombstone. */
  private authorize(mgmtHash: string): MetaRow {
    const meta = this.meta();
    if (!meta) throw new AppError("not_found", "No such resource.");
    if (!digestsEqual(meta.mgmt_hash, mgmtHash)) throw new AppError("unauthorized", "The management token is not valid for this resource.");
    return meta;
  }

  private kindOf(name: string): AnyKind {
    const kind = findKind(name);
    if (!kind) throw new Error(`unknown kind ${name}`);
    return kind;
  }

  private store(meta: MetaRow, now = Date.now()): EngineStore {
    return { resourceId: meta.id, sql: this.sql, env: this.env, now, createdAt: meta.created_at };
  }

  private record(meta: MetaRow, state: ResourceState): RecordCore {
    const kind = this.kindOf(meta.kind);
    const config = JSON.parse(meta.config) as unknown;
    const store = this.store(meta);
    return recordOf(meta, kind, state, { usage: kind.usage(store, config), status: kind.status?.(store, config) ?? null });
  }

  private dryRun(work: () => unknown): void {
    try {
      this.ctx.storage.transactionSync(() => {
        work();
        throw ROLLBACK;
      });
    } catch (err) {
      if (err !== ROLLBACK) throw err;
    }
  }

  private async charge(payer: Payer, amount: number, operation: string, resourceId: string, requestId: string): Promise<number | null> {
    if (payer.type === "prepaid" || amount === 0) return null;
    const { accountId, tokenId, tokenHash } = payer;
    const result = await accountStub(this.env, accountId).charge({ tokenId, tokenHash, amount, operation, resourceId, requestId });
    return unwrap(result).chargeId;
  }

  private async refund(payer: Payer, chargeId: number | null, requestId: string): Promise<void> {
    if (payer.type !== "credit" || chargeId === null) return;
    await accountStub(this.env, payer.accountId).refund({ chargeId, requestId });
  }
}

async function deletePrefix(bucket: R2Bucket, prefix: string): Promise<void> {
  for (let cursor: string | undefined; ; ) {
    const page = await bucket.list({ prefix, cursor, limit: 1000 });
    if (page.objects.length) await bucket.delete(page.objects.map((o) => o.key));
    if (!page.truncated) return;
    cursor = page.cursor;
  }
}
