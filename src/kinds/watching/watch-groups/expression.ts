/**
 * A group's expression, as Datadog's composite monitors read theirs: it is true when the group
 * should alert. A leaf names a child by its alias and is true while that child is down; `and`,
 * `or`, `not` and `at_least` combine them. Children that are paused, not yet checked or not yet
 * heard from are unknown, and the logic is three-valued (Kleene): an unknown child decides
 * nothing on its own, so `or` is true as soon as one child is down, `and` false as soon as one
 * is up, and "at least K of N" is decided once K are down or too few could still be.
 */
import { z } from "@hono/zod-openapi";

export type Expression =
  string | { and: Expression[] } | { or: Expression[] } | { not: Expression } | { at_least: number; of: Expression[] };

export const MAX_DEPTH = 8;
export const MAX_CHILDREN = 20;
export const ALIAS_PATTERN = /^[a-z][a-z0-9_]{0,31}$/;
export const alias = z
  .string()
  .regex(ALIAS_PATTERN, "must be an alias: a lower-case letter, then letters, digits or _ (at most 32)");

const MAX_TERMS = 20;
export const expression: z.ZodType<Expression> = z
  .lazy(() =>
    z.union([
      alias,
      z.object({ and: z.array(expression).min(1).max(MAX_TERMS) }).strict(),
      z.object({ or: z.array(expression).min(1).max(MAX_TERMS) }).strict(),
      z.object({ not: expression }).strict(),
      z.object({ at_least: z.int().min(1).max(MAX_TERMS), of: z.array(expression).min(1).max(MAX_TERMS) }).strict(),
    ]),
  )
  .openapi("WatchGroupExpression", {
    description:
      "A child's alias (true while it is down), or { and: […] }, { or: […] }, { not: … }, " +
      "{ at_least: K, of: […] }.",
  });

/** Why an expression cannot be used with these children (an unknown alias, too deep, K larger than N), or null. */
export function expressionProblem(e: Expression, aliases: Set<string>, depth = 1): string | null {
  if (depth > MAX_DEPTH) return `nested deeper than ${MAX_DEPTH} levels`;
  if (typeof e === "string") return aliases.has(e) ? null : `"${e}" is not one of the children`;
  const terms = "not" in e ? [e.not] : "and" in e ? e.and : "or" in e ? e.or : e.of;
  if ("at_least" in e && e.at_least > e.of.length) return `at_least ${e.at_least} of ${e.of.length} can never hold`;
  for (const t of terms) {
    const problem = expressionProblem(t, aliases, depth + 1);
    if (problem) return problem;
  }
  return null;
}

/** The aliases an expression names. */
export function aliasesIn(e: Expression, into = new Set<string>()): Set<string> {
  if (typeof e === "string") into.add(e);
  else for (const t of "not" in e ? [e.not] : "and" in e ? e.and : "or" in e ? e.or : e.of) aliasesIn(t, into);
  return into;
}

/** true: alert (down); false: up; null: unknown. */
export type Truth = boolean | null;

export function evaluate(e: Expression, down: (alias: string) => Truth): Truth {
  if (typeof e === "string") return down(e);
  if ("not" in e) {
    const v = evaluate(e.not, down);
    return v === null ? null : !v;
  }
  const values = ("and" in e ? e.and : "or" in e ? e.or : e.of).map((t) => evaluate(t, down));
  const yes = values.filter((v) => v === true).length;
  const unknown = values.filter((v) => v === null).length;
  const need = "and" in e ? values.length : "or" in e ? 1 : e.at_least;
  if (yes >= need) return true;
  if (yes + unknown < need) return false;
  return null;
}
