/** Per-kind samples for the contract test: a valid create body, an invalid one (with the path it must name), and a paid operation. */
export interface KindFixture {
  valid: Record<string, unknown>;
  invalid: { body: Record<string, unknown>; path: string };
  /** A paid data-plane call that succeeds on a fresh resource. */
  op: { method: string; path: string; body?: unknown };
}

export const FIXTURES: Record<string, KindFixture> = {
  counters: {
    valid: { initial: 5, min: 0, max: 100, label: "jobs" },
    invalid: { body: { initial: "five" }, path: "initial" },
    op: { method: "POST", path: "/increment", body: { by: 2 } },
  },
};
