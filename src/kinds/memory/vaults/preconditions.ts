/**
 * Compare-and-set for vault writes: If-Match / If-None-Match (RFC 9110 §13.1) and the
 * body's `if_version`, which carries the same test for clients that send no headers
 * (MCP tools). A version is the ETag, quoted: `"42"`. A bare number is accepted too,
 * since agents often drop the quotes. A failed test is 409 `conflict` carrying the
 * key's current version (412 is the HTTP status for it; the error codes have none yet).
 */
import { AppError } from "../../../http/errors";

/** "any" is `*`; a list of versions may be empty (only foreign tags were sent: nothing matches). */
type TagList = "any" | number[];

export interface Precondition {
  match?: TagList;
  noneMatch?: TagList;
  /** From the body: 0 = must not exist. */
  version?: number;
}

export const etag = (version: number): string => `"${version}"`;

/**
 * Parses an If-Match / If-None-Match value. `weak`: whether W/ tags compare (If-None-Match
 * uses the weak comparison, If-Match the strong one, where a weak tag never matches).
 */
function parseTags(header: string, name: string, weak: boolean): TagList {
  const trimmed = header.trim();
  if (trimmed === "*") return "any";
  const versions: number[] = [];
  for (const raw of trimmed.split(",")) {
    const tag = raw.trim();
    const m = /^(W\/)?(?:"([^"]*)"|([0-9]+))$/.exec(tag);
    if (!m) {
      throw new AppError("invalid_request", `${name} must be * or a list of ETags such as "42".`, {
        errors: [{ path: `header.${name.toLowerCase()}`, message: 'must be * or ETags such as "42"' }],
      });
    }
    const isWeak = m[1] !== undefined;
    const text = m[2] ?? m[3] ?? "";
    if ((isWeak && !weak) || !/^[0-9]{1,15}$/.test(text)) continue; // cannot match one of our versions
    versions.push(Number(text));
  }
  return versions;
}

export function preconditionOf(input: {
  "if-match"?: string;
  "if-none-match"?: string;
  if_version?: number;
}): Precondition {
  return {
    ...(input["if-match"] !== undefined ? { match: parseTags(input["if-match"], "If-Match", false) } : {}),
    ...(input["if-none-match"] !== undefined
      ? { noneMatch: parseTags(input["if-none-match"], "If-None-Match", true) }
      : {}),
    ...(input.if_version !== undefined ? { version: input.if_version } : {}),
  };
}

const holds = (list: TagList, current: number | null) => current !== null && (list === "any" || list.includes(current));

/** Why the test fails for a key at `current` (null: absent), or null when it holds. */
function failure(p: Precondition, current: number | null): string | null {
  if (p.match !== undefined && !holds(p.match, current))
    return current === null ? "the key does not exist (If-Match)" : `the key is at version ${current} (If-Match)`;
  if (p.noneMatch !== undefined && holds(p.noneMatch, current))
    return p.noneMatch === "any"
      ? "the key exists (If-None-Match: *)"
      : `the key is at version ${current} (If-None-Match)`;
  if (p.version !== undefined && (current ?? 0) !== p.version) {
    return current === null
      ? `the key does not exist, not at version ${p.version}`
      : p.version === 0
        ? "the key exists"
        : `the key is at version ${current}, not ${p.version}`;
  }
  return null;
}

/** Throws 409 when the test fails; the problem carries current_version (and the ETag header when the key exists). */
export function checkPrecondition(p: Precondition, key: string, current: number | null, where = ""): void {
  const why = failure(p, current);
  if (why === null) return;
  throw new AppError("conflict", `${where}Precondition failed for ${JSON.stringify(key)}: ${why}.`, {
    extra: { key, current_version: current },
    ...(current !== null ? { headers: { ETag: etag(current) } } : {}),
  });
}
