/**
 * A kind's operation on its resource (POST /v1/{kind}/{id}/{op}), a part of ResourceObject: authorized (a narrowed
 * token's limits included), waited for when the operation long-polls, prepared, and run in one transaction with its
 * charge, against a hold (billing.ts) or prepaid by x402 in the worker. A refused or failed call is never charged;
 * a peek runs the operation in a transaction that rolls back.
 */
import { AppError } from "../../src/http/errors";
import { requireKind } from "../../src/resources/kinds";
import type { Json } from "../../src/json";
import type { OpInput, Replay } from "../../src/rpc/resource";
import { afterCommit } from "./engine-store";
import type { MetaRow } from "./meta";
import type { MetaCell } from "./meta-cell";
import type { ResourceClock } from "./clock";
import type { ResourceWork } from "./work";
import type { Billing } from "./billing";
import { dryRun } from "./transactions";
import { refuseOutsideMoney } from "./sandbox-clock";
import { keepAnswer, keptAnswer } from "./kept-answers";
import { dieAt } from "./test-faults";
import type { ResourceFaults } from "../../src/rpc/resource-faults";

/**
 * Refuses (in the transaction, so it rolls back uncharged) an answer that is not the one the caller already acted on.
 */
function expected(out: Json, expect: OpInput["expect"]): Json {
  if (!expect) return out;
  const got = out as Record<string, Json>;
  const moved = Object.keys(expect).find((k) => got?.[k] !== expect[k]);
  if (moved)
    throw new AppError(
      "conflict",
      "The content changed during the call (it was replaced or deleted); nothing was charged. Retry.",
      { extra: { changed: moved } },
    );
  return out;
}

export class ResourceOperations {
  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly meta: MetaCell,
    private readonly clock: ResourceClock,
    private readonly work: ResourceWork,
    private readonly billing: () => Billing,
    /** Sets the alarm for what is next due (the object's, which knows every part's due times). */
    private readonly armAlarm: () => Promise<void>,
    /** Test-only faults (injectFaults, ENVIRONMENT=test). */
    private readonly faults: ResourceFaults,
  ) {}

  /** Runs the operation, or answers what it answered before under the same Idempotency-Key (kept-answers.ts). */
  async run(input: OpInput, body: ReadableStream<Uint8Array> | null): Promise<Json> {
    const replay = input.peek ? undefined : input.replay;
    const kept = replay === undefined ? undefined : keptAnswer(this.storage.sql, replay);
    if (kept !== undefined) {
      // Only to a token that still reaches the operation (runOnce checks everyone else).
      this.meta.authorizeKind(input.mgmtHash, input.kind, { name: input.op });
      return kept;
    }
    const out = await this.runOnce(input, body, replay);
    dieAt(this.faults, "op-answer-lost");
    return out;
  }

  /** `body`: the raw request bytes of a rawBody operation, streamed through. */
  private async runOnce(
    input: OpInput,
    body: ReadableStream<Uint8Array> | null,
    replay: Replay | undefined,
  ): Promise<Json> {
    const op = requireKind(input.kind).ops.find((o) => o.name === input.op);
    if (!op) throw new AppError("not_found", `Unknown operation ${input.op}.`);
    const { meta, grant } = this.meta.authorizeKind(input.mgmtHash, input.kind, {
      name: op.name,
      op,
      input: input.input,
    });
    // A narrowed token's paid calls: counted with the work; once spent, refused before a prepare step works for
    // nothing.
    const counted = grant && input.priceMicro > 0 && !input.peek ? grant : null;
    if (counted && op.prepare) this.meta.grants.checkPaidCall(counted);
    refuseOutsideMoney(this.clock.sandboxId, input.payer, input.priceMicro);
    const config = this.meta.config(meta);
    if (input.peek) {
      if (op.prepare) throw new Error(`${meta.kind}.${op.name}: an operation with a prepare step cannot be peeked`);
      return dryRun(this.storage, () =>
        op.run(this.work.store(meta, this.clock.now(), afterCommit()), config, input.input, undefined),
      );
    }
    if (op.ready)
      await this.work.waitUntil(
        meta,
        (store) => op.ready!(store, config, input.input),
        (input.input as { wait_seconds?: number }).wait_seconds ?? 0,
      );
    // A call that cannot be paid is refused before its prepare step does work it would then have to undo.
    if (op.prepare && input.priceMicro && input.payer.type !== "prepaid")
      await this.billing().reserve(input.payer, input.priceMicro);
    return this.work.prepared(
      meta,
      op.prepare && ((ctx) => op.prepare!(ctx, config, input.input, body)),
      op.discard,
      async (prepared) => {
        const price = input.priceMicro;
        const pending = afterCommit();
        const run = (current: MetaRow) => {
          if (counted) this.meta.grants.countPaidCall(counted);
          const out = expected(
            op.run(this.work.store(current, this.clock.now(), pending), config, input.input, prepared),
            input.expect,
          );
          if (replay) keepAnswer(this.storage.sql, replay, out);
          return out;
        };
        const payer = input.payer;
        if (payer.type === "prepaid" || price === 0) {
          // Paid by x402 in the worker (or free). No await between the work and the total: they commit together.
          const out = this.storage.transactionSync(() => run(meta));
          if (price) this.meta.update({ charged: this.meta.get()!.charged + price });
          await this.work.afterWork(meta, pending);
          return out;
        }
        const out = await this.billing().spend(
          this.storage,
          payer,
          price,
          { operation: `${meta.kind}.${op.name}`, requestId: input.requestId },
          () => run(this.meta.stillHere()),
          async () => {
            Object.assign(pending, afterCommit()); // the dry run before a hold sends and drops nothing
            await this.armAlarm();
            this.meta.stillHere();
          },
        );
        await this.work.afterWork(meta, pending);
        return out;
      },
    );
  }
}
