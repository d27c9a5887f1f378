/**
 * Keyset pages (docs/api.md#requests-and-conventions: `?limit=&cursor=` → `{ items, next_cursor }`). A list asks for
 * `limit + 1` rows past its cursor: the extra row only says that a next page exists, whose cursor is the key of this
 * page's last row.
 */
/** A type, not an interface: it must be assignable to Json, which an interface (without an index signature) is not. */
export type Page<T> = { items: T[]; next_cursor: string | null };

export function keysetPage<R, T>(
  rows: R[],
  limit: number,
  keyOf: (row: R) => string | number,
  view: (row: R) => T,
): Page<T> {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { items: page.map(view), next_cursor: rows.length > limit && last !== undefined ? String(keyOf(last)) : null };
}
