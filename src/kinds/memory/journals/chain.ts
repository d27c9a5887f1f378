/**
 * The journal's hash chain. Each entry's `hash` commits to the previous entry's
 * hash and to this entry's seq, time, type and data, so whoever holds a head
 * (seq, hash) can tell whether any earlier entry was changed, dropped or
 * reordered. The construction uses plain text, RFC 8785 canonical JSON and
 * SHA-256 only, so any language can recompute it; HASH_RULE is the exact
 * wording published in the OpenAPI document and in the export.
 */
import { sha256Hex } from "../../../bytes";
import type { Json } from "../../../json";

/** The `prev_hash` of entry 1, and the head hash of an empty journal. */
export const GENESIS = "0".repeat(64);

export const HASH_RULE =
  'hash = lowercase hex SHA-256 of the UTF-8 text prev_hash + "\\n" + seq + "\\n" + time + "\\n" + type + ' +
  '"\\n" + data, ' +
  "where seq is in decimal, time is the entry's `time` exactly as returned (RFC 3339 UTC with milliseconds), " +
  "type is the entry's type or the empty string when it is null, data is the entry's data as RFC 8785 " +
  "(JCS) canonical JSON, " +
  `there is no trailing newline, and prev_hash is the previous entry's hash (64 zeros, ` +
  `${GENESIS.slice(0, 8)}…, for entry 1).`;

export interface ChainedEntry {
  seq: number;
  /** RFC 3339, as the entry shows it. */
  time: string;
  type: string | null;
  /** The data as canonical JSON text (what the journal stores). */
  canonical: string;
}

export function entryHash(prevHash: string, e: ChainedEntry): string {
  return sha256Hex([prevHash, String(e.seq), e.time, e.type ?? "", e.canonical].join("\n"));
}

/** How deep an entry's JSON may nest: the canonical form is built recursively. */
export const MAX_DEPTH = 64;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * RFC 8785 canonical JSON: object members sorted by the UTF-16 code units of their names,
 * no whitespace, numbers and strings serialised as ECMAScript's JSON.stringify does.
 * Returns a reason instead of text for what JCS cannot carry (lone surrogates) or nests too deep.
 */
export function canonicalJson(value: Json, depth = 0): { text: string } | { error: string } {
  if (depth > MAX_DEPTH) return { error: `nests deeper than ${MAX_DEPTH} levels` };
  if (typeof value === "string")
    return LONE_SURROGATE.test(value) ? { error: "contains a lone UTF-16 surrogate" } : { text: JSON.stringify(value) };
  if (value === null || typeof value !== "object") return { text: JSON.stringify(value) };
  const parts: string[] = [];
  if (Array.isArray(value)) {
    for (const item of value) {
      const out = canonicalJson(item, depth + 1);
      if ("error" in out) return out;
      parts.push(out.text);
    }
    return { text: `[${parts.join(",")}]` };
  }
  for (const key of Object.keys(value).sort()) {
    if (LONE_SURROGATE.test(key)) return { error: "has a member name with a lone UTF-16 surrogate" };
    const out = canonicalJson(value[key]!, depth + 1);
    if ("error" in out) return out;
    parts.push(`${JSON.stringify(key)}:${out.text}`);
  }
  return { text: `{${parts.join(",")}}` };
}
