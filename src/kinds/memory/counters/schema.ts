/** Request and response shapes of counters; the same schemas validate, type and document. */
import { z } from "@hono/zod-openapi";

const int = () => z.int().describe("A safe integer (|n| ≤ 2^53 − 1).");

const counterConfigFields = z
  .object({
    initial: int()
      .optional()
      .describe(
        "Starting value, and the value each reset window starts from. Default 0, or the nearest bound when " +
          "0 is outside min..max.",
      ),
    min: int()
      .optional()
      .describe(
        "Lowest allowed value (at most max; initial must not be below it): an operation that would go " +
          "below it is refused with 409.",
      ),
    max: int().optional().describe("Highest allowed value: an operation that would go above it is refused with 409."),
    reset_every_seconds: z
      .int()
      .min(60)
      .max(366 * 86400)
      .optional()
      .describe("Reset to `initial` at every multiple of this period after creation (rate windows, daily budgets)."),
  })
  .refine((c) => c.min === undefined || c.max === undefined || c.min <= c.max, {
    message: "min must not exceed max",
    path: ["min"],
  })
  .refine((c) => c.min === undefined || c.initial === undefined || c.initial >= c.min, {
    message: "initial is below min",
    path: ["initial"],
  })
  .refine((c) => c.max === undefined || c.initial === undefined || c.initial <= c.max, {
    message: "initial is above max",
    path: ["initial"],
  })
  // The default follows the bounds, so `{ "min": 1 }` alone is a valid counter starting at 1.
  .overwrite((c) => ({ ...c, initial: c.initial ?? Math.min(Math.max(0, c.min ?? 0), c.max ?? Infinity) }));

export type CounterConfig = z.infer<typeof counterConfigFields> & { initial: number };
/** Typed with `initial` present, as the overwrite step guarantees. */
export const counterConfig = counterConfigFields as unknown as z.ZodType<CounterConfig>;

export const counterValue = z
  .object({
    value: z.int(),
    min: z.int().nullable(),
    max: z.int().nullable(),
    updated_at: z.string().describe("RFC 3339 time of the last change."),
    window_resets_at: z
      .string()
      .nullable()
      .describe("When the value next resets to `initial`; null without a reset window."),
  })
  .openapi("CounterValue");

export const stepInput = z.object({
  by: z.int().min(1).default(1).describe("How much to add or subtract."),
});

export const setInput = z.object({ value: z.int().describe("The new value, within min and max (else 409).") });

export const compareAndSetInput = z.object({
  expected: z.int().describe("The value the counter must hold for the write to happen."),
  value: z.int().describe("The new value, within min and max (else 409)."),
});
