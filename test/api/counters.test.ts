/** counters, per docs/kinds.md: increment/decrement by n, get, set, compare-and-set, bounds, reset windows. */
import { describe, expect, it } from "vitest";
import { counters } from "../../src/kinds/memory/counters";
import {
  advance,
  balanceOf,
  buyCredits,
  call,
  createResource,
  json,
  managed,
  opsOn,
  type ResourceExport,
} from "../harness";

async function counter(body: Record<string, unknown> = {}) {
  const { token } = await buyCredits(1);
  const { id, mgmt } = await createResource("counters", token, body);
  return { token, id, mgmt, ...opsOn(counters, id, mgmt, token) };
}

describe("counters", () => {
  it("increments, decrements, sets and reads", async () => {
    const { ok } = await counter({ initial: 10 });
    expect((await ok("get", "")).value).toBe(10);
    expect((await ok("increment", "/increment")).value).toBe(11);
    expect((await ok("increment", "/increment", { by: 5 })).value).toBe(16);
    expect((await ok("decrement", "/decrement", { by: 20 })).value).toBe(-4);
    expect((await ok("set", "", { value: 42 })).value).toBe(42);
    expect(await ok("get", "")).toMatchObject({ value: 42, min: null, max: null, window_resets_at: null });
  });

  it("compare-and-set writes only on the expected value", async () => {
    const { ok, refused } = await counter();
    expect((await ok("compare_and_set", "/compare-and-set", { expected: 0, value: 7 })).value).toBe(7);
    const lost = await refused("compare_and_set", "/compare-and-set", { expected: 0, value: 9 });
    expect(lost.status).toBe(409);
    expect(lost.detail).toContain("holds 7");
  });

  it("refuses to cross a bound with 409 and does not charge", async () => {
    const { ok, refused, token } = await counter({ initial: 1, min: 0, max: 2 });
    expect((await ok("increment", "/increment")).value).toBe(2);
    const spent = (await balanceOf(token)).spent_usd;
    const over = await refused("increment", "/increment");
    expect(over.status).toBe(409);
    expect(over.code).toBe("conflict");
    const under = await refused("decrement", "/decrement", { by: 3 });
    expect(under.status).toBe(409);
    expect((await ok("get", "")).value).toBe(2);
    expect((await balanceOf(token)).spent_usd).toBeCloseTo(spent + 0.0001, 6); // only the GET
  });

  it("resets to initial at each window", async () => {
    const { ok, id } = await counter({ initial: 3, reset_every_seconds: 60 });
    expect((await ok("increment", "/increment", { by: 4 })).value).toBe(7);
    await advance(id, 61_000); // a window and a bit
    const after = await ok("get", "");
    expect(after.value).toBe(3);
    expect(Date.parse(after.window_resets_at ?? "")).toBeGreaterThan(Date.now() + 61_000);
  });

  it("validates bounds and steps", async () => {
    const { token } = await buyCredits(1);
    const bad = await call("POST", "/v1/counters", {
      body: { min: 5, max: 1 },
      headers: { authorization: `Bearer ${token}` },
    });
    expect(bad.status).toBe(422);
    const { refused } = await counter();
    const zero = await refused("increment", "/increment", { by: 0 });
    expect(zero.status).toBe(422);
    expect(zero.errors?.[0]?.path).toBe("by");
    expect((await refused("increment", "/increment", { by: 1.5 })).status).toBe(422);
  });

  it("exports its value", async () => {
    const { ok, id, mgmt } = await counter({ initial: 2 });
    await ok("increment", "/increment");
    const res = await call("GET", `/v1/resources/${id}/export`, { headers: managed(mgmt) });
    expect((await json<ResourceExport<{ value: number }>>(res)).data.value).toBe(3);
  });
});
