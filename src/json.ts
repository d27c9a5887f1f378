/** A JSON value: what crosses Durable Object RPC and goes out in a response body. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/**
 * How deeply a JSON value a caller sends may nest (a free-form field's value: a wakeup's body, a
 * vault value, a journal entry). Enough for any real document, and far from the depth at which
 * serialising, hashing or comparing it would exhaust the stack.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * The path to the first place where `value` nests deeper than `limit` levels (a scalar is 0
 * levels, `[]` one), or null when it does not. Iterative, so no value can exhaust the stack here;
 * JSON.parse itself is iterative too, so parsing first and checking after is safe.
 */
export function deeperThan(value: unknown, limit: number): (string | number)[] | null {
  const stack: { value: unknown; depth: number; path: (string | number)[] }[] = [{ value, depth: 0, path: [] }];
  while (stack.length) {
    const item = stack.pop()!;
    if (typeof item.value !== "object" || item.value === null) continue;
    if (item.depth + 1 > limit) return item.path;
    const entries: [string | number, unknown][] = Array.isArray(item.value)
      ? item.value.map((v, i) => [i, v])
      : Object.entries(item.value);
    for (const [key, child] of entries) stack.push({ value: child, depth: item.depth + 1, path: [...item.path, key] });
  }
  return null;
}
