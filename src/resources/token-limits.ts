/**
 * What a narrowed management token may do (docs/api.md#narrowed-management-tokens), as plain rules over
 * the registry: which names it may be granted, what `read-only` stands for, whether a call falls within
 * its limits, and whether a token asked of it would be narrower. The resource's object keeps the limits
 * (durable-objects/resource/grants.ts) and applies these rules on every call; nothing here reads storage.
 */
import { AppError, type FieldError } from "../http/errors";
import type { AnyKind } from "../kind/kind";
import type { AnyOp } from "../kind/op";
import type { AskedLimits } from "../rpc/resource";

/** Stands for every operation that only reads: the kind's GET operations and the delivery log. */
export const READ_ONLY = "read-only";

/** What a token of any resource may call whatever its operations: the resource's status, and its own tokens. */
const ALWAYS = new Set(["get_resource", "tokens"]);

/**
 * The calls beside the kind's operations, by the operationId of their route (names no kind's operation
 * takes: a queue has its own `extend`). Extending, exporting and cancelling take an unrestricted token
 * unless granted by name; `read-only` grants none of them (an export reads everything at once).
 */
const MANAGEMENT_NAMES = [
  "extend_resource",
  "export_resource",
  "cancel_resource",
  "list_deliveries",
  "retry_delivery",
] as const;
const READ_ONLY_MANAGEMENT = ["list_deliveries"];
/** Names a narrowed token may call only when they are in its list (one without a list may call everything else). */
const BY_NAME_ONLY = new Set(["extend_resource", "export_resource", "cancel_resource"]);

/** Whether limits with these `operations` let a token call `name`. */
const allows = (operations: string[] | null, name: string) =>
  operations ? operations.includes(name) : !BY_NAME_ONLY.has(name);

/** The limits a narrowed token carries: null where it has none of its own (its parent's, or none at all, apply). */
export interface Limits {
  /** The names it may call, `read-only` expanded; null: every name. */
  operations: string[] | null;
  /** Epoch ms; null: until the resource ends. */
  expiresAt: number | null;
  maxPaidCalls: number | null;
  keyPrefixes: string[] | null;
}

/** What a call asks of its token: a management call by its name, or one of the kind's operations with its input. */
export type Need = { name: string; op?: AnyOp; input?: unknown };

const isKeyed = (kind: AnyKind) => kind.ops.some((op) => op.keys);

/** Every name a token of `kind` may be granted, `read-only` first. */
export function grantableNames(kind: AnyKind): string[] {
  return [READ_ONLY, ...kind.ops.map((op) => op.name), ...MANAGEMENT_NAMES];
}

/** The names `asked` stands for (`read-only` expanded), or a 422 naming the unknown ones. */
export function expandOperations(kind: AnyKind, asked: string[]): string[] {
  const known = new Set(grantableNames(kind));
  const unknown = asked.filter((name) => !known.has(name));
  if (unknown.length) {
    const message = `not an operation of a ${kind.kind} resource; one of: ${grantableNames(kind).join(", ")}`;
    throw new AppError(
      "validation_failed",
      `operations: ${unknown.join(", ")} ${unknown.length > 1 ? "are" : "is"} ${message}.`,
      {
        errors: unknown.map((name) => ({ path: `operations.${asked.indexOf(name)}`, message })),
      },
    );
  }
  const names = new Set(asked.filter((name) => name !== READ_ONLY));
  if (asked.includes(READ_ONLY)) {
    for (const op of kind.ops) if (op.method === "get") names.add(op.name);
    for (const name of READ_ONLY_MANAGEMENT) names.add(name);
  }
  return [...names].sort();
}

/** The values at a dotted path (`*`: every item of an array). */
function valuesAt(value: unknown, path: string[]): unknown[] {
  if (path.length === 0) return [value];
  const [head, ...rest] = path as [string, ...string[]];
  if (head === "*") return Array.isArray(value) ? value.flatMap((item) => valuesAt(item, rest)) : [];
  if (!value || typeof value !== "object" || !(head in value)) return [];
  return valuesAt((value as Record<string, unknown>)[head], rest);
}

const under = (key: string, prefixes: string[]) => prefixes.some((prefix) => key.startsWith(prefix));

/**
 * Refuses (403, naming the limit) a call its token's own limits do not cover; the paid-call cap is counted where the
 * call commits.
 */
export function checkLimits(limits: Limits, need: Need, now: number): void {
  if (limits.expiresAt !== null && now >= limits.expiresAt) {
    throw new AppError(
      "token_expired",
      `This management token expired at ${new Date(limits.expiresAt).toISOString()}.`,
      { extra: { limit: "expires_at" } },
    );
  }
  if (ALWAYS.has(need.name)) return;
  if (!allows(limits.operations, need.name)) {
    const may = limits.operations
      ? `it may call ${limits.operations.join(", ")} (and get_resource)`
      : `${need.name} takes the resource's own token, or a narrowed one that names it`;
    throw new AppError("token_operation_not_allowed", `This management token may not call ${need.name}: ${may}.`, {
      extra: { limit: "operations", operation: need.name, operations: limits.operations },
    });
  }
  if (limits.keyPrefixes && need.op) checkKeys(limits.keyPrefixes, need.op, need.input);
}

function checkKeys(prefixes: string[], op: AnyOp, input: unknown): void {
  const refuse = (what: string) =>
    new AppError(
      "token_key_not_allowed",
      `This management token reaches only keys under ${prefixes.map((p) => JSON.stringify(p)).join(", ")}; ${what}.`,
      {
        extra: { limit: "key_prefixes", key_prefixes: prefixes },
      },
    );
  if (!op.keys) throw refuse(`${op.name} is not limited to keys, so it is not open to it`);
  for (const key of (op.keys.at ?? []).flatMap((path) => valuesAt(input, path.split(".")))) {
    if (typeof key === "string" && !under(key, prefixes)) throw refuse(`${JSON.stringify(key)} is not`);
  }
  if (op.keys.prefix !== undefined) {
    const asked = valuesAt(input, [op.keys.prefix])[0];
    const prefix = typeof asked === "string" ? asked : "";
    if (!under(prefix, prefixes))
      throw refuse(`list with a \`${op.keys.prefix}\` under one of them (${JSON.stringify(prefix)} is not)`);
  }
}

/**
 * The limits of a token derived from one with `parent` limits (UNLIMITED: the resource's own token) and
 * `parentRemaining` paid calls left over its whole line (null: none counted), for a resource of `kind`
 * ending at `resourceEnd`: each limit asked for must be within the parent's, and one not asked for is the
 * parent's. Asking beyond the parent is 403 `token_widening` naming each excess; bad values are 422.
 */
export function deriveLimits(
  kind: AnyKind,
  parent: Limits,
  parentRemaining: number | null,
  asked: AskedLimits,
  now: number,
  resourceEnd: number,
): Limits {
  const operations = asked.operations ? expandOperations(kind, asked.operations) : parent.operations;
  if (asked.expiresAt !== undefined && asked.expiresAt <= now) {
    throw new AppError("validation_failed", "expires_at: must be in the future.", {
      errors: [{ path: "expires_at", message: `must be after ${new Date(now).toISOString()}` }],
    });
  }
  if (asked.expiresAt !== undefined && asked.expiresAt > resourceEnd) {
    const message = `must be no later than the resource's own expires_at, ${new Date(resourceEnd).toISOString()}`;
    throw new AppError("validation_failed", `expires_at: ${message}.`, { errors: [{ path: "expires_at", message }] });
  }
  if (asked.keyPrefixes && !isKeyed(kind)) {
    const message = `a ${kind.kind} resource has no keys`;
    throw new AppError("validation_failed", `key_prefixes: ${message}.`, {
      errors: [{ path: "key_prefixes", message }],
    });
  }
  const beyond: FieldError[] = [];
  const extra = parent === UNLIMITED ? [] : (operations ?? []).filter((name) => !allows(parent.operations, name));
  if (extra.length)
    beyond.push({ path: "operations", message: `asks for ${extra.join(", ")}, which the parent token may not call` });
  if (asked.expiresAt !== undefined && parent.expiresAt !== null && asked.expiresAt > parent.expiresAt) {
    beyond.push({
      path: "expires_at",
      message: `is later than the parent token's expires_at, ${new Date(parent.expiresAt).toISOString()}`,
    });
  }
  if (asked.maxPaidCalls !== undefined && parentRemaining !== null && asked.maxPaidCalls > parentRemaining) {
    beyond.push({
      path: "max_paid_calls",
      message: `is more than the ${parentRemaining} paid calls the parent token has left`,
    });
  }
  const prefixes = asked.keyPrefixes ?? parent.keyPrefixes;
  const outside = parent.keyPrefixes
    ? (asked.keyPrefixes ?? []).filter((prefix) => !under(prefix, parent.keyPrefixes!))
    : [];
  if (outside.length)
    beyond.push({
      path: "key_prefixes",
      message:
        `${outside.map((p) => JSON.stringify(p)).join(", ")} ${outside.length > 1 ? "are" : "is"}` +
        ` not under the parent token's prefixes`,
    });
  if (beyond.length) {
    throw new AppError(
      "token_widening",
      `A token can only be narrower than the one that makes it: ` +
        `${beyond.map((b) => `${b.path} ${b.message}`).join("; ")}.`,
      {
        errors: beyond,
        extra: { limit: beyond.map((b) => b.path) },
      },
    );
  }
  return {
    operations,
    expiresAt: asked.expiresAt ?? parent.expiresAt,
    maxPaidCalls: asked.maxPaidCalls ?? null,
    keyPrefixes: prefixes,
  };
}

/** The limits of the resource's own token: none. */
export const UNLIMITED: Limits = { operations: null, expiresAt: null, maxPaidCalls: null, keyPrefixes: null };
