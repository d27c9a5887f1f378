/**
 * Reading many keys: prefix listing with a cursor, get_many and the export. Keys are
 * ordered as SQLite compares TEXT, by the bytes of their UTF-8, which is code point
 * order; a prefix becomes a range on the primary key, so a page costs the same at
 * 100,000 keys as at ten.
 */
import { fromBase64Url, toBase64Url } from "../../../bytes";
import { AppError } from "../../../http/errors";
import type { EngineStore } from "../../../kind/kind";
import { ALIVE, INFO_COLUMNS, entryOf, infoOf, readEntry, totals, type KeyRow } from "./store";
import { GET_MANY_VALUE_BUDGET, LIST_VALUE_BUDGET, type Entry, type EntryInfo, type ListInput } from "./schema";

/**
 * The least string above every string that starts with `prefix` (null: none exists, the
 * prefix being all U+10FFFF): the prefix with its last code point raised by one.
 */
export function prefixEnd(prefix: string): string | null {
  const points = Array.from(prefix, (ch) => ch.codePointAt(0)!);
  while (points.length > 0) {
    const last = points.pop()!;
    if (last < 0x10ffff) {
      points.push(last + 1 === 0xd800 ? 0xe000 : last + 1); // surrogates have no UTF-8 form: step over them
      return String.fromCodePoint(...points);
    }
  }
  return null;
}

const encodeCursor = (key: string) => toBase64Url(new TextEncoder().encode(key));

function decodeCursor(cursor: string): string {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(fromBase64Url(cursor));
  } catch {
    throw new AppError("validation_failed", "cursor: must be a next_cursor value from a previous page.", {
      errors: [{ path: "cursor", message: "must be a next_cursor value from a previous page" }],
    });
  }
}

type Item = EntryInfo & { value?: Entry["value"] };

export function listKeys(store: EngineStore, input: ListInput): { items: Item[]; next_cursor: string | null } {
  const where = [ALIVE];
  const args: (string | number)[] = [store.now];
  const prefix = input.prefix ?? "";
  if (prefix) {
    where.push("key >= ?");
    args.push(prefix);
    const end = prefixEnd(prefix);
    if (end !== null) {
      where.push("key < ?");
      args.push(end);
    }
  }
  if (input.cursor) {
    where.push("key > ?");
    args.push(decodeCursor(input.cursor));
  }
  const columns = input.include_values ? `${INFO_COLUMNS}, value` : INFO_COLUMNS;
  const rows = store.sql.exec<KeyRow & { value?: string }>(
    `SELECT ${columns} FROM vault_keys WHERE ${where.join(" AND ")} ORDER BY key LIMIT ?`,
    ...args,
    input.limit + 1,
  );
  const items: Item[] = [];
  let valueBytes = 0;
  let more = false;
  // Rows are read one by one, so a page that stops early (limit, or its values' budget) reads no further.
  for (const row of rows) {
    if (items.length === input.limit || (input.include_values && valueBytes >= LIST_VALUE_BUDGET)) {
      more = true;
      break;
    }
    if (!row.key.startsWith(prefix)) continue; // the range is exact; this only guards it
    items.push(row.value === undefined ? infoOf(row) : entryOf({ ...row, value: row.value }));
    valueBytes += row.value?.length ?? 0;
  }
  const last = items[items.length - 1];
  return { items, next_cursor: more && last ? encodeCursor(last.key) : null };
}

export function getMany(store: EngineStore, keys: string[]) {
  let valueBytes = 0;
  const items = keys.map((key) => {
    const entry = readEntry(store, key);
    if (entry) valueBytes += entry.bytes;
    return { key, found: entry !== null, entry };
  });
  if (valueBytes > GET_MANY_VALUE_BUDGET) {
    throw new AppError(
      "payload_too_large",
      `These keys hold ${valueBytes} bytes together; get_many returns at most ${GET_MANY_VALUE_BUDGET}: ask for fewer.`,
    );
  }
  return { items };
}

/** Every live key with its value, in key order (the limits keep this within what one answer carries). */
export function exportVault(store: EngineStore) {
  const rows = store.sql.exec<KeyRow & { value: string }>(
    `SELECT ${INFO_COLUMNS}, value FROM vault_keys WHERE ${ALIVE} ORDER BY key`,
    store.now,
  );
  const keys: Entry[] = [];
  for (const row of rows) keys.push(entryOf(row));
  return { ...totals(store), keys };
}
