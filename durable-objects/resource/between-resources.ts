/**
 * What passes between a resource and another of its owner's, a part of ResourceObject: a message another resource
 * relayed here, what this one shares (a link serving a blob's bytes), and bytes another wrote below this one's prefix
 * (a transfer's copy) taken as its own content. An ended resource takes and shares nothing.
 */
import { AppError } from "../../src/http/errors";
import { requireKind } from "../../src/resources/kinds";
import type { Json } from "../../src/json";
import type { AdoptedObject, RelayInput } from "../../src/rpc/resource";
import type { MetaRow } from "./meta";
import type { MetaCell } from "./meta-cell";
import type { ResourceClock } from "./clock";
import type { ResourceWork } from "./work";

export class BetweenResources {
  constructor(
    private readonly meta: MetaCell,
    private readonly clock: ResourceClock,
    private readonly work: ResourceWork,
  ) {}

  /** Whether the resource has ended (or is ending). */
  private ended(meta: MetaRow): boolean {
    return Boolean(this.meta.endingState(meta)) || this.clock.now() >= meta.expires_at;
  }

  /** The kind takes the message in a transaction (once per relay id). */
  async relay(input: RelayInput): Promise<null> {
    const meta = this.meta.get();
    const relay = meta && requireKind(meta.kind).relay;
    if (!meta || !relay || this.ended(meta)) {
      throw new AppError(
        "not_found",
        meta && !relay ? `A ${meta.kind} resource takes no relayed messages.` : "The resource has ended.",
      );
    }
    await this.work.commit(meta, (store) =>
      relay(store, this.meta.config(meta), JSON.parse(input.body) as Json, input.deliveryId, input.from),
    );
    return null;
  }

  shared(): { key: string } | null {
    const meta = this.meta.get();
    const shared = meta && requireKind(meta.kind).shared;
    if (!meta || !shared || this.ended(meta)) return null;
    return shared(this.work.store(meta), this.meta.config(meta));
  }

  async adopt(input: AdoptedObject): Promise<null> {
    const meta = this.meta.get();
    const adopt = meta && requireKind(meta.kind).adopt;
    if (!meta || !adopt || this.ended(meta)) {
      throw new AppError(
        "not_found",
        meta && !adopt ? `A ${meta.kind} resource takes no content from other resources.` : "The resource has ended.",
      );
    }
    if (!input.key.startsWith(`${meta.id}/`))
      throw new AppError("forbidden", "The content is not below this resource's prefix.");
    await this.work.commit(meta, (store) => adopt(store, this.meta.config(meta), input));
    return null;
  }
}
