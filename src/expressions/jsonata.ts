/**
 * JSONata expressions (the `jsonata` package: a parser and a tree-walking evaluator, no `eval` or
 * `new Function`, which Workers forbid) for the kinds that reshape or filter JSON: transformers,
 * fanout filters, and later watches. Caller input runs here, so every evaluation is bounded:
 *
 * - steps: each node evaluated counts, so a loop (JSONata turns tail calls into loops, which the
 *   stack bound never sees) ends with an error, not a hang. A time bound would not do: a Worker's
 *   clock does not advance while it computes.
 * - stack depth and sequence length, by the library's own guards.
 * - regular expressions: a quantified group that itself contains a quantifier (`(a+)+`), and
 *   backreferences, are refused when the expression is compiled: they can backtrack for ever
 *   inside one native call, where no step count reaches.
 */
import jsonata from "jsonata";
import { fieldError } from "../http/errors";
import type { Json } from "../json";

export const MAX_EXPRESSION_CHARS = 4096;
export const EXPRESSION_LIMITS = { steps: 100_000, stack: 100, sequence: 100_000 } as const;

type Expression = ReturnType<typeof jsonata>;

/** Why a regular expression may backtrack without bound (see above), or null. */
export function riskyRegex(source: string): string | null {
  if (/\\[1-9]|\\k</.test(source)) return "backreferences are not allowed";
  // A stack of open groups, each remembering whether a quantifier occurred inside it.
  const groups: boolean[] = [];
  let lastGroupQuantified = false;
  for (let i = 0; i < source.length; i++) {
    const ch = source[i]!;
    if (ch === "\\") {
      i++;
      lastGroupQuantified = false;
      continue;
    }
    if (ch === "[") {
      for (i++; i < source.length && source[i] !== "]"; i++) if (source[i] === "\\") i++;
      lastGroupQuantified = false;
      continue;
    }
    if (ch === "(") {
      groups.push(false);
      continue;
    }
    const quantifier =
      ch === "*" || ch === "+" || ch === "?" || (ch === "{" && /^\{\d+(,\d*)?\}/.test(source.slice(i)));
    if (ch === ")") {
      lastGroupQuantified = groups.pop() ?? false;
      if (groups.length && lastGroupQuantified) groups[groups.length - 1] = true;
      const next = source[i + 1];
      const repeated = next === "*" || next === "+" || (next === "{" && /^\{\d+,\d*\}/.test(source.slice(i + 1)));
      if (repeated && lastGroupQuantified)
        return "a repeated group containing a repetition (such as (a+)+) can take for ever";
      continue;
    }
    if (quantifier && groups.length && ch !== "?") groups[groups.length - 1] = true;
    lastGroupQuantified = false;
  }
  return null;
}

function checkRegexes(node: unknown, field: string): void {
  if (Array.isArray(node)) return node.forEach((n) => checkRegexes(n, field));
  if (!node || typeof node !== "object") return;
  const n = node as Record<string, unknown>;
  if (n.type === "regex" && n.value instanceof RegExp) {
    const why = riskyRegex(n.value.source);
    if (why) throw fieldError(field, `the regular expression /${n.value.source}/: ${why}`);
  }
  for (const value of Object.values(n))
    if (value && typeof value === "object" && !(value instanceof RegExp)) checkRegexes(value, field);
}

/** Parses `text`, or throws 422 naming `field` with JSONata's message and position. */
function parse(text: string, field: string): Expression {
  if (text.length > MAX_EXPRESSION_CHARS) throw fieldError(field, `at most ${MAX_EXPRESSION_CHARS} characters`);
  let expression: Expression;
  try {
    expression = jsonata(text, { stack: EXPRESSION_LIMITS.stack, sequence: EXPRESSION_LIMITS.sequence });
  } catch (err) {
    const e = err as { message?: string; position?: number };
    throw fieldError(
      field,
      `not a JSONata expression: ${e.message ?? String(err)}${e.position !== undefined ? ` (at ${e.position})` : ""}`,
    );
  }
  checkRegexes(expression.ast(), field);
  return expression;
}

/**
 * Checks an expression at the request that brings it (422 naming `field`); a later evaluation then only fails on its
 * input.
 */
export function checkExpression(text: string, field: string): void {
  parse(text, field);
}

export type Evaluation = { ok: true; value: Json | null } | { ok: false; error: string };

/**
 * Evaluates `text` on `input` within EXPRESSION_LIMITS: the JSON result (null when there is none), or why it failed.
 */
export async function evaluate(text: string, input: Json, bindings: Record<string, Json> = {}): Promise<Evaluation> {
  const expression = parse(text, "expression");
  let steps = 0;
  expression.assign(Symbol.for("jsonata.__evaluate_entry") as unknown as string, () => {
    if (++steps > EXPRESSION_LIMITS.steps)
      throw { code: "ZV001", message: `the expression took more than ${EXPRESSION_LIMITS.steps} steps` };
  });
  try {
    const value: unknown = await expression.evaluate(input, bindings);
    // A sequence carries helper properties and a function is no JSON: the result as JSON has neither.
    return {
      ok: true,
      value: value === undefined ? null : ((JSON.parse(JSON.stringify(value) ?? "null") as Json) ?? null),
    };
  } catch (err) {
    const e = err as { message?: string; code?: string };
    return { ok: false, error: `${e.code ? `${e.code}: ` : ""}${e.message ?? String(err)}` };
  }
}
