/**
 * The resource's meta row as the object keeps it: read once per object lifetime, written through,
 * and the checks every call makes against it (the management token, the kind, an end under way).
 */
import { AppError } from "../../src/http/errors";
import { digestsEqual } from "../../src/auth/ids";
import { readMeta, type MetaRow, type ResourceState } from "./meta";
import { checkLimits, type Need } from "../../src/resources/token-limits";
import { ResourceGrants, type Grant } from "./grants";

export class MetaCell {
  /** undefined = not read yet, null = no resource here. */
  private cached: MetaRow | null | undefined;
  /** The kind's config, parsed once per object lifetime (it changes only when a migration rewrites it). */
  private parsedConfig: { text: string; value: unknown } | undefined;
  /** Set while an end deletes the resource: no operation may start (and charge) in that window. */
  ending: Exclude<ResourceState, "active"> | null = null;

  /** Narrowed management tokens and their limits (grants.ts). */
  readonly grants: ResourceGrants;

  /** `now`: the resource's clock, which a narrowed token's expiry is read against. */
  constructor(
    private readonly sql: SqlStorage,
    private readonly now: () => number,
  ) {
    this.grants = new ResourceGrants(sql);
  }

  get(): MetaRow | null {
    if (this.cached === undefined) this.cached = readMeta(this.sql);
    return this.cached;
  }

  /** The row a create just inserted (the outbox reads the resource's id from it in the same transaction). */
  set(row: MetaRow | null): void {
    this.cached = row;
  }

  /** Read again on next use: a migration may have added columns. */
  forget(): void {
    this.cached = undefined;
  }

  /** Writes meta columns and keeps the cached row in step. */
  update(changes: Partial<MetaRow>): void {
    const columns = Object.keys(changes);
    this.sql.exec(`UPDATE resource_meta SET ${columns.map((c) => `${c} = ?`).join(", ")}`, ...Object.values(changes));
    this.cached = { ...this.get()!, ...changes };
  }

  config(meta: MetaRow): unknown {
    if (this.parsedConfig?.text !== meta.config)
      this.parsedConfig = { text: meta.config, value: JSON.parse(meta.config) };
    return this.parsedConfig.value;
  }

  /** Whether the resource is ending (in this call, or an end that failed part-way and awaits the alarm). */
  endingState(meta: MetaRow): MetaRow["ended"] {
    return this.ending ?? meta.ended;
  }

  /**
   * The resource, when `mgmtHash` is its own token's, or a narrowed token's whose limits allow `need`
   * (403 naming the limit otherwise; grants.ts); `grant` is that narrowed token, null for the resource's
   * own. The own token's check stays one comparison; a narrowed one's is read once per object lifetime.
   * Not found here means never created or already ended: the worker then consults the D1 tombstone.
   */
  authorizeCall(mgmtHash: string, need: Need): { meta: MetaRow; grant: Grant | null } {
    const meta = this.get();
    if (!meta) throw new AppError("not_found", "No such resource.", { resourceMissing: true });
    const ending = this.endingState(meta);
    if (ending) {
      const expired = ending === "expired";
      throw new AppError(
        expired ? "resource_expired" : "resource_cancelled",
        `This resource is being ${expired ? "expired" : "cancelled"}; its data is being deleted.`,
      );
    }
    if (digestsEqual(meta.mgmt_hash, mgmtHash)) return { meta, grant: null };
    const grant = this.grants.find(mgmtHash);
    if (!grant) throw new AppError("unauthorized", "The management token is not valid for this resource.");
    checkLimits(grant, need, this.now());
    return { meta, grant };
  }

  authorize(mgmtHash: string, need: Need): MetaRow {
    return this.authorizeCall(mgmtHash, need).meta;
  }

  /**
   * As authorizeCall, for a route that names the kind (`/v1/{kind}/{id}/…`): another kind's resource is not found
   * there.
   */
  authorizeKind(mgmtHash: string, kind: string, need: Need): { meta: MetaRow; grant: Grant | null } {
    const authorized = this.authorizeCall(mgmtHash, need);
    if (authorized.meta.kind !== kind)
      throw new AppError("not_found", `${authorized.meta.id} is not a ${kind} resource.`);
    return authorized;
  }

  /** After awaiting, the resource may have ended meanwhile: nothing may be recorded (or charged) then. */
  stillHere(): MetaRow {
    const meta = this.get();
    if (!meta || this.endingState(meta))
      throw new AppError("not_found", "The resource ended during the operation.", { resourceMissing: true });
    return meta;
  }
}
