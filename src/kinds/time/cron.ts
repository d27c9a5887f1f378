/**
 * Cron in an IANA time zone, for the Time kinds that tick on one (schedules,
 * snapshots): five fields read by croner, so DST shifts the UTC times and never
 * the local ones. One place validates an expression and builds its clock.
 */
import { z } from "@hono/zod-openapi";
import { Cron } from "croner";

/**
 * What an expression looks like: five fields of digits, names, `*`, `?`, `L`, `W`, `#`, `,`, `-`, `/`
 * (or a nickname such as `@daily`). Croner checks the rest (ranges, steps, names); the shape is in the
 * schema so a client builds one (`* * * * *`) rather than any string.
 */
const CRON_SHAPE = /^\s*[*?0-9A-Za-z,#/-]+(\s+[*?0-9A-Za-z,#/-]+){4}\s*$|^@[A-Za-z]+$/;

export const cronExpression = z
  .string()
  .max(120)
  .regex(CRON_SHAPE, "must be five fields (minute hour day-of-month month day-of-week) or a nickname such as @daily");

export function validTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** Why `cron` is not a usable 5-field expression in `timezone`, or null when it is. */
export function cronProblem(cron: string, timezone: string): string | null {
  try {
    new Cron(cron, { timezone, mode: "5-part" });
    return null;
  } catch (err) {
    return err instanceof Error ? err.message.replace(/^CronPattern: /, "") : "is not a 5-field cron expression";
  }
}

/** The expression's clock, optionally bounded (RFC 3339 times): `nextRun(after)` gives the next tick. */
export function cronOf(cron: string, timezone: string, bounds: { startAt?: string; stopAt?: string } = {}): Cron {
  return new Cron(cron, { timezone, mode: "5-part", startAt: bounds.startAt, stopAt: bounds.stopAt });
}
