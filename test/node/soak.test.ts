/**
 * The soak's short profile (bench/soak.mjs, about 5 minutes of mixed traffic from several agents, the
 * runtime killed and restarted on its state a few times, receivers failing at random): every invariant
 * it reconciles at the end must hold. Memory is reported there, not asserted; nothing here is timed.
 */
import { describe, expect, it } from "vitest";
import { soak } from "../../bench/soak.mjs";

type Row = { invariant: string; ok: boolean; detail: string };

describe("the soak, short profile", () => {
  it(
    "reconciles money, deliveries, resource state, stored data and answers after kills",
    async () => {
      const result = (await soak({ profile: "short" })) as { rows: Row[]; failures: Row[]; text: string };
      console.log(result.text);
      expect(result.rows.length).toBeGreaterThan(10);
      expect(result.failures.map((f) => `${f.invariant}: ${f.detail}`)).toEqual([]);
    },
    40 * 60_000,
  );
});
