/**
 * A kind's collection of made things kept until deleted or the resource ends: pdf's renders,
 * convert's conversions, ocr's recognitions. Each is a row in its own table keyed by `seq` (the
 * keyset cursor) with a public id; a row that keeps a file in R2 names it in `object_key` with its
 * `size`, and deleting the row deletes the file. The kind says its table, its nouns, how many it
 * keeps and how a row is shown; listing, reading, downloading and deleting are the same for all.
 */
import { AppError } from "../http/errors";
import { checkRange } from "./downloads";
import type { EngineStore, PrepareContext } from "./engine";
import { keysetPage, type Page } from "./pages";

/**
 * The names a collection goes by: its column of public ids (also the path parameter's name), what one is called
 * ("render") and many ("renders"), in errors and in its operations' names (artifact-ops.ts). Kept literal in the types,
 * so a kind's operations are typed by name.
 */
export interface ArtifactNames<
  Noun extends string = string,
  Plural extends string = string,
  Id extends string = string,
> {
  idColumn: Id;
  noun: Noun;
  plural: Plural;
}

export interface ArtifactSpec<
  Row extends { seq: number },
  View,
  Names extends ArtifactNames = ArtifactNames,
> extends ArtifactNames<Names["noun"], Names["plural"], Names["idColumn"]> {
  /** The SQL table. */
  table: string;
  /** How many a resource keeps at most. */
  max: number;
  viewOf(store: EngineStore, row: Row): View;
}

/** A row whose file is in R2. */
export interface StoredRow {
  seq: number;
  object_key: string;
  size: number;
}

export interface Artifacts<Row, View, Names extends ArtifactNames = ArtifactNames> {
  /** What the kind said of them (its table, names and limit): the operations are named from it (artifact-ops.ts). */
  readonly spec: ArtifactSpec<Row & { seq: number }, View, Names>;
  /** Refuses (507) a new one when the resource already keeps `max`; called before any work is done. */
  checkRoom(sql: SqlStorage): void;
  count(sql: SqlStorage): number;
  row(store: EngineStore, id: string): Row;
  get(store: EngineStore, id: string): View;
  remove(store: EngineStore, id: string): View;
  page(store: EngineStore, limit: number, cursor: string | undefined): Page<View>;
  all(store: EngineStore): View[];
}

export function artifacts<
  Row extends { seq: number },
  View,
  Noun extends string,
  Plural extends string,
  Id extends string,
>(
  spec: ArtifactSpec<Row, View, ArtifactNames<Noun, Plural, Id>>,
  onRemove?: (store: EngineStore, row: Row) => void,
): Artifacts<Row, View, ArtifactNames<Noun, Plural, Id>> {
  const { table, idColumn } = spec;
  const count = (sql: SqlStorage) => sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`).one().n;
  const row = (store: EngineStore, id: string): Row => {
    const r = store.sql.exec<Row>(`SELECT * FROM ${table} WHERE ${idColumn} = ?`, id).toArray()[0];
    if (!r) throw new AppError("not_found", `No ${spec.noun} ${id} here.`);
    return r;
  };
  return {
    spec,
    checkRoom(sql) {
      if (count(sql) >= spec.max)
        throw new AppError(
          "storage_full",
          `This resource keeps at most ${spec.max} ${spec.plural}: delete some first.`,
        );
    },
    count,
    row,
    get: (store, id) => spec.viewOf(store, row(store, id)),
    remove(store, id) {
      const r = row(store, id);
      store.sql.exec(`DELETE FROM ${table} WHERE seq = ?`, r.seq);
      onRemove?.(store, r);
      return spec.viewOf(store, r);
    },
    page(store, limit, cursor) {
      const before = cursor === undefined ? Number.MAX_SAFE_INTEGER : Number(cursor);
      const rows = store.sql
        .exec<Row>(`SELECT * FROM ${table} WHERE seq < ? ORDER BY seq DESC LIMIT ?`, before, limit + 1)
        .toArray();
      return keysetPage(
        rows,
        limit,
        (r) => r.seq,
        (r) => spec.viewOf(store, r),
      );
    },
    all: (store) =>
      store.sql
        .exec<Row>(`SELECT * FROM ${table} ORDER BY seq DESC`)
        .toArray()
        .map((r) => spec.viewOf(store, r)),
  };
}

export interface StoredArtifacts<Row, View, Names extends ArtifactNames = ArtifactNames> extends Artifacts<
  Row,
  View,
  Names
> {
  /** What the download serves; a Range that selects nothing is refused here, before it is charged. */
  stored(store: EngineStore, id: string, range: string | undefined): { object_key: string };
  /** How many and their bytes. */
  usage(sql: SqlStorage): { n: number; bytes: number };
  /** Deletes the file `prepare` put in R2 when the call is refused after it. */
  discard<Made extends { key: string }>(ctx: PrepareContext, made: Made): Promise<void>;
}

/** Artifacts whose files are in R2: deleting one deletes its file. */
export function storedArtifacts<
  Row extends StoredRow,
  View,
  Noun extends string,
  Plural extends string,
  Id extends string,
>(
  spec: ArtifactSpec<Row, View, ArtifactNames<Noun, Plural, Id>>,
): StoredArtifacts<Row, View, ArtifactNames<Noun, Plural, Id>> {
  const base = artifacts(spec, (store, r) => store.dropObjects([r.object_key]));
  return {
    ...base,
    stored(store, id, range) {
      const r = base.row(store, id);
      checkRange(range, r.size);
      return { object_key: r.object_key };
    },
    usage(sql) {
      const u = sql
        .exec<{ n: number; bytes: number | null }>(`SELECT COUNT(*) AS n, SUM(size) AS bytes FROM ${spec.table}`)
        .one();
      return { n: u.n, bytes: u.bytes ?? 0 };
    },
    async discard(ctx, made) {
      await ctx.env.BUCKET.delete(made.key);
    },
  };
}
