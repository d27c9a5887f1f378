/**
 * What a pure function gave for a key, kept in this isolate for the last `max` keys (the oldest let go
 * first): for readings every request would otherwise redo, such as a token's hash, a public id's parts
 * or a Durable Object's id. `keeps` decides which results are worth a place (not junk, not huge keys).
 */
export function memoized<K, V>(
  compute: (key: K) => V,
  max: number,
  keeps: (key: K, value: V) => boolean = () => true,
): (key: K) => V {
  const kept = new Map<K, V>();
  return (key) => {
    if (kept.has(key)) return kept.get(key) as V;
    const value = compute(key);
    if (keeps(key, value)) {
      kept.set(key, value);
      if (kept.size > max) kept.delete(kept.keys().next().value!);
    }
    return value;
  };
}
