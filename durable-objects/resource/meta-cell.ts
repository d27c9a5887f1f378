/**
 * The resource's meta row as the object keeps it: read once per object lifetime, written through,
 * and the checks every call makes against it (the management token, the kind, an end under way).
 */
import { AppError } from "../../src/http/errors";
import { digestsEqual } from "../../src/auth/ids";
import { readMeta, type MetaRow, type ResourceState } from "./meta";

export class MetaCell {
  /** undefined = not read yet, null = no resource here. */
  private cached: MetaRow | null | undefined;
  /** The kind's config, parsed once per object lifetime (it changes only when a migration rewrites it). */
  private parsedConfig: { text: string; value: unknown } | undefined;
  /** Set while an end deletes the resource: no operation may start (and charge) in that window. */
  ending: Exclude<ResourceState, "active"> | null = null;

  constructor(private readonly sql: SqlStorage) {}

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
    if (this.parsedConfig?.text !== meta.config) this.parsedConfig = { text: meta.config, value: JSON.parse(meta.config) };
    return this.parsedConfig.value;
  }

  /** Whether the resource is ending (in this call, or an end that failed part-way and awaits the alarm). */
  endingState(meta: MetaRow): MetaRow["ended"] {
    return this.ending ?? meta.ended;
  }

  /** Not found here means never created or already ended: the worker then consults the D1 tombstone. */
  authorize(mgmtHash: string): MetaRow {
    const meta = this.get();
    if (!meta) throw new AppError("not_found", "No such resource.", { resourceMissing: true });
    const ending = this.endingState(meta);
    if (ending) {
      const expired = ending === "expired";
      throw new AppError(expired ? "resource_expired" : "resource_cancelled", `This resource is being ${expired ? "expired" : "cancelled"}; its data is being deleted.`);
    }
    if (!digestsEqual(meta.mgmt_hash, mgmtHash)) throw new AppError("unauthorized", "The management token is not valid for this resource.");
    return meta;
  }

  /** As authorize, for a route that names the kind (`/v1/{kind}/{id}/…`): another kind's resource is not found there. */
  authorizeKind(mgmtHash: string, kind: string): MetaRow {
    const meta = this.authorize(mgmtHash);
    if (meta.kind !== kind) throw new AppError("not_found", `${meta.id} is not a ${kind} resource.`);
    return meta;
  }

  /** After awaiting, the resource may have ended meanwhile: nothing may be recorded (or charged) then. */
  stillHere(): MetaRow {
    const meta = this.get();
    if (!meta || this.endingState(meta)) throw new AppError("not_found", "The resource ended during the operation.", { resourceMissing: true });
    return meta;
  }

}
