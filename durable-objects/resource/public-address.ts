/**
 * The resource's public address, a part of ResourceObject: requests from strangers (free, no credentials) handed to
 * the kind's public face, the report of how an answer went (settled), and the operator's switch that disables the
 * address, mirrored here so no hit reads D1. The worker found this object from the public id; the whole id must be
 * this resource's.
 */
import { AppError } from "../../src/http/errors";
import { requireKind } from "../../src/resources/kinds";
import { digestsEqual } from "../../src/auth/ids";
import { PREPARE_ATTEMPTS, PreparedStale, type AnyPublicFace, type PublicAnswer } from "../../src/kind/public-face";
import type { PublicBodyIntent, PublicInput, PublicSettled } from "../../src/rpc/resource";
import type { ResourceFaults } from "../../src/rpc/resource-faults";
import type { MetaCell } from "./meta-cell";
import type { MetaRow } from "./meta";
import type { ResourceClock } from "./clock";
import type { ResourceWork } from "./work";
import type { R2Intents } from "./r2-intents";
import { dieAt } from "./test-faults";

export class PublicAddress {
  constructor(
    private readonly meta: MetaCell,
    private readonly clock: ResourceClock,
    private readonly work: ResourceWork,
    private readonly intents: R2Intents,
    private readonly faults: ResourceFaults,
  ) {}

  /**
   * Before the worker puts a large body to R2 for a request to this address: the key's intent, so that bytes no
   * request commits (the worker died after the put) are deleted by the alarm (r2-intents.ts).
   */
  async intendBody(input: PublicBodyIntent): Promise<null> {
    const { meta } = this.served(input.publicId);
    if (!input.key.startsWith(`${meta.id}/public-bodies/`))
      throw new Error(`a public body's key must lie below ${meta.id}/public-bodies/`);
    await this.intents.intendAhead(input.key);
    return null;
  }

  /** A request to the address, matched to the kind's route by the worker. */
  async request(input: PublicInput): Promise<PublicAnswer> {
    dieAt(this.faults, "public-request-lost");
    const body = input.request.body;
    // A body the worker stored first is this call's, as its own puts are: its commit keeps it (r2-intents.ts).
    return this.intents.adopt(body && !(body instanceof Uint8Array) ? body.key : null, () => this.handle(input));
  }

  /** The resource and its face, when `publicId` is its address and the address serves; else the caller's error. */
  private served(publicId: string): { meta: MetaRow; face: AnyPublicFace } {
    const meta = this.meta.get();
    const face = meta && requireKind(meta.kind).public;
    if (!meta || !face || !meta.public_id || !digestsEqual(meta.public_id, publicId) || meta.public_disabled) {
      throw new AppError("not_found", "Nothing is served at this address.", { resourceMissing: !meta });
    }
    const ending = this.meta.endingState(meta) ?? (this.clock.now() >= meta.expires_at ? "expired" : null);
    if (ending)
      throw new AppError(
        ending === "expired" ? "resource_expired" : "resource_cancelled",
        `The resource behind this address ${ending === "expired" ? "has expired" : "was cancelled"}.`,
      );
    return { meta, face };
  }

  private async handle(input: PublicInput): Promise<PublicAnswer> {
    const { meta, face } = this.served(input.publicId);
    const config = this.meta.config(meta);
    const once = () =>
      this.work.prepared(
        meta,
        face.prepare && ((ctx) => face.prepare!(ctx, config, input.request)),
        face.discard && ((ctx, p) => face.discard!(ctx, config, p)),
        (prepared) => this.work.commit(meta, (store) => face.handle(store, config, input.request, prepared)),
      );
    let handled: unknown;
    for (let attempt = 1; ; attempt++) {
      try {
        handled = await once();
        break;
      } catch (err) {
        if (!(err instanceof PreparedStale)) throw err;
        if (attempt >= PREPARE_ATTEMPTS)
          throw new AppError(
            "conflict",
            "The resource changed while this request was prepared, each time it was tried; send it again.",
          );
      }
    }
    const answer = face.finish
      ? await face.finish(this.work.prepareContext(meta), config, input.request, handled)
      : (handled as PublicAnswer);
    // Reused no later than the resource's end (in the worker's time: a test clock runs ahead of it).
    return answer.reuse
      ? { ...answer, reuse: { ...answer.reuse, until: Date.now() + (meta.expires_at - this.clock.now()) } }
      : answer;
  }

  /** How an answer went (its status, its duration), for a kind that keeps count; an ended resource hears nothing. */
  async settled(input: PublicSettled): Promise<null> {
    const meta = this.meta.get();
    const settled = meta && requireKind(meta.kind).public?.settled;
    if (
      !meta ||
      !settled ||
      this.meta.endingState(meta) ||
      !meta.public_id ||
      !digestsEqual(meta.public_id, input.publicId)
    )
      return null;
    await this.work.commit(meta, (store) =>
      settled(store, this.meta.config(meta), input.report, { status: input.status, durationMs: input.durationMs }),
    );
    return null;
  }

  /** The operator disabled (or enabled again) the address; false when it is not this resource's. */
  setDisabled(input: { publicId: string; disabled: boolean }): boolean {
    const meta = this.meta.get();
    if (!meta || meta.public_id !== input.publicId) return false;
    this.meta.update({ public_disabled: input.disabled ? 1 : 0 });
    return true;
  }
}
