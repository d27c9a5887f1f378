/**
 * Journal state inside its ResourceObject. Entries are keyed by seq (the rowid),
 * so appends, range reads and single lookups are B-tree seeks whatever the
 * journal's length; the head (last seq, hash, time) and the byte total live in
 * one state row, so an append reads nothing else. Entry data is stored as its
 * canonical JSON: what is hashed is exactly what is stored and returned.
 */
import { utf8Length } from "../../../bytes";
import { AppError } from "../../../http/errors";
import type { Json } from "../../../json";
import type { EngineStore } from "../../../kind/kind";
import { iso, isoOrNull } from "../../../time";
import { canonicalJson, entryHash, GENESIS, HASH_RULE } from "./chain";
import {
  MAX_ENTRIES,
  MAX_ENTRY_BYTES,
  MAX_JOURNAL_BYTES,
  MAX_PAGE_BYTES,
  type EntryInput,
  type ReadInput,
  type TailInput,
} from "./schema";

export type HeadRow = { head_seq: number; head_hash: string; head_time: number | null; bytes: number };
type EntryRow = {
  seq: number;
  time: number;
  type: string | null;
  data: string;
  hash: string;
  prev_hash: string | null;
};

/** The module's tables as the kind's first migration creates them (see the kind's `migrations`). */
export const TABLES = [
  `CREATE TABLE journal_state (id INTEGER PRIMARY KEY CHECK (id = 1),
    head_seq INTEGER NOT NULL, head_hash TEXT NOT NULL, head_time INTEGER, bytes INTEGER NOT NULL)`,
  "CREATE TABLE journal_entries (seq INTEGER PRIMARY KEY, time INTEGER NOT NULL, type TEXT, data TEXT NOT " +
    "NULL, hash TEXT NOT NULL)",
];

export function init(store: EngineStore): void {
  store.sql.exec(
    "INSERT INTO journal_state (id, head_seq, head_hash, head_time, bytes) VALUES (1, 0, ?, NULL, 0)",
    GENESIS,
  );
}

export function head(sql: SqlStorage): HeadRow {
  return sql.exec<HeadRow>("SELECT head_seq, head_hash, head_time, bytes FROM journal_state").one();
}

/** The canonical text of each entry's data, refusing what cannot be canonicalised (422) or is too large (413). */
function canonicalise(inputs: EntryInput[], pathOf: (i: number) => string): { text: string; bytes: number }[] {
  return inputs.map((e, i) => {
    const out = canonicalJson(e.data);
    if ("error" in out) {
      throw new AppError("validation_failed", `${pathOf(i)}: ${out.error}.`, {
        errors: [{ path: pathOf(i), message: out.error }],
      });
    }
    const bytes = utf8Length(out.text);
    if (bytes > MAX_ENTRY_BYTES)
      throw new AppError(
        "payload_too_large",
        `${pathOf(i)} is ${bytes} bytes as canonical JSON; an entry takes at most ${MAX_ENTRY_BYTES}.`,
      );
    return { text: out.text, bytes };
  });
}

/**
 * Appends entries in order, all or none: consecutive seqs, one time, each hash chained to the one
 * before. With `expectedSeq`, only onto that head (optimistic concurrency): 409 names the current one.
 */
export function append(
  store: EngineStore,
  inputs: EntryInput[],
  expectedSeq: number | undefined,
  pathOf: (i: number) => string,
) {
  const h = head(store.sql);
  if (expectedSeq !== undefined && expectedSeq !== h.head_seq) {
    throw new AppError(
      "conflict",
      `The journal's last seq is ${h.head_seq}, not ${expectedSeq}: read what was appended since, then retry.`,
      {
        extra: { current_seq: h.head_seq },
      },
    );
  }
  const canon = canonicalise(inputs, pathOf);
  if (h.head_seq + inputs.length > MAX_ENTRIES) {
    throw new AppError(
      "payload_too_large",
      `A journal holds at most ${MAX_ENTRIES} entries; this one holds ${h.head_seq}, so ${inputs.length}` +
        ` more do not fit.`,
    );
  }
  // Types are stored and exported with the data, so they count too.
  const added = canon.reduce((sum, c, i) => sum + c.bytes + (inputs[i]!.type?.length ?? 0), 0);
  if (h.bytes + added > MAX_JOURNAL_BYTES) {
    throw new AppError(
      "payload_too_large",
      `A journal holds at most ${MAX_JOURNAL_BYTES} bytes of data and types; this one holds ${h.bytes}, so ` +
        `${added} more do not fit.`,
    );
  }
  // Never earlier than the last entry, so time is monotonic along the journal even if the clock steps back.
  const at = Math.max(store.now, h.head_time ?? 0);
  const time = iso(at);
  let prev = h.head_hash;
  let seq = h.head_seq;
  const items = inputs.map((input, i) => {
    seq += 1;
    const hash = entryHash(prev, { seq, time, type: input.type, canonical: canon[i]!.text });
    store.sql.exec(
      "INSERT INTO journal_entries (seq, time, type, data, hash) VALUES (?, ?, ?, ?, ?)",
      seq,
      at,
      input.type,
      canon[i]!.text,
      hash,
    );
    const item = { seq, time, type: input.type, prev_hash: prev, hash };
    prev = hash;
    return item;
  });
  store.sql.exec(
    "UPDATE journal_state SET head_seq = ?, head_hash = ?, head_time = ?, bytes = bytes + ?",
    seq,
    prev,
    at,
    added,
  );
  return { items, head_seq: seq };
}

const view = (r: EntryRow) => ({
  seq: r.seq,
  time: iso(r.time),
  type: r.type,
  data: JSON.parse(r.data) as Json,
  prev_hash: r.prev_hash ?? GENESIS,
  hash: r.hash,
});

/** Entry rows with the previous entry's hash beside each (a primary-key join, one seek per row). */
const SELECT_ENTRIES =
  "SELECT e.seq, e.time, e.type, e.data, e.hash, p.hash AS prev_hash FROM journal_entries e LEFT JOIN " +
  "journal_entries p ON p.seq = e.seq - 1";

/**
 * Up to `limit` entries from the cursor, stopping early past MAX_PAGE_BYTES; rows are read lazily,
 * so a page never loads more than it returns plus one. Returns the seq where the next page starts.
 */
function collect(cursor: Iterable<EntryRow>, limit: number) {
  const items: ReturnType<typeof view>[] = [];
  let bytes = 0;
  for (const row of cursor) {
    if (items.length === limit || (items.length > 0 && bytes + row.data.length > MAX_PAGE_BYTES))
      return { items, next: row.seq };
    bytes += row.data.length;
    items.push(view(row));
  }
  return { items, next: null };
}

export function read(store: EngineStore, input: ReadInput) {
  const h = head(store.sql);
  const backward = input.direction === "backward";
  const from = input.cursor !== undefined ? Number(input.cursor) : (input.from_seq ?? (backward ? h.head_seq : 1));
  const cursor = backward
    ? store.sql.exec<EntryRow>(`${SELECT_ENTRIES} WHERE e.seq <= ? ORDER BY e.seq DESC`, from)
    : store.sql.exec<EntryRow>(`${SELECT_ENTRIES} WHERE e.seq >= ? ORDER BY e.seq`, from);
  const page = collect(cursor, input.limit);
  return { items: page.items, next_cursor: page.next === null ? null : String(page.next), head_seq: h.head_seq };
}

/** A tail long-poll is ready once something lies after `after_seq`. */
export const hasAfter = (store: EngineStore, input: TailInput) => head(store.sql).head_seq > input.after_seq;

export function tail(store: EngineStore, input: TailInput) {
  const h = head(store.sql);
  const page = collect(
    store.sql.exec<EntryRow>(`${SELECT_ENTRIES} WHERE e.seq > ? ORDER BY e.seq`, input.after_seq),
    input.limit,
  );
  return { items: page.items, head_seq: h.head_seq, next_after_seq: page.items.at(-1)?.seq ?? input.after_seq };
}

export function one(store: EngineStore, seq: number) {
  const row = store.sql.exec<EntryRow>(`${SELECT_ENTRIES} WHERE e.seq = ?`, seq).toArray()[0];
  if (!row) throw new AppError("not_found", `No entry ${seq}: the journal's last seq is ${head(store.sql).head_seq}.`);
  return view(row);
}

export function info(store: EngineStore) {
  const h = head(store.sql);
  return {
    head_seq: h.head_seq,
    head_hash: h.head_hash,
    head_time: isoOrNull(h.head_time),
    bytes: h.bytes,
    hash_rule: HASH_RULE,
  };
}

/** Everything, oldest first; `prev_hash` is left out (each is the hash before it), keeping the export small. */
export function exportAll(store: EngineStore) {
  const entries = store.sql
    .exec<Omit<EntryRow, "prev_hash">>("SELECT seq, time, type, data, hash FROM journal_entries ORDER BY seq")
    .toArray()
    .map((r) => ({ seq: r.seq, time: iso(r.time), type: r.type, data: JSON.parse(r.data) as Json, hash: r.hash }));
  const { hash_rule, ...rest } = info(store);
  return { hash_rule, head: rest, entries };
}
