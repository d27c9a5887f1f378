/** counters, per KINDS.md: increment/decrement by n, get, set, compare-and-set, bounds, reset windows. */
import { describe, expect, it } from "vitest";
import { advance, balanceOf, buyCredits, call, createResource, json, managed } from "../harness";

async function counter(body: Record<string, unknown> = {}) {
  const { token } = await buyCredits(1);
  const { id, mgmt } = await createResource("counters", token, body);
  const op = async (method: string, path: string, payload?: unknown) => {
    const res = await call(method, `/v1/counters/${id}${path}`, { body: payload, headers: managed(mgmt, token) });
    return { status: res.status, body: await json(res) };
  };
  return { token, id, mgmt, op };
}

describe("counters", () => {
  it("increments, decrements, sets and reads", async () => {
    const { op } = await counter({ initial: 10 });
    expect((await op("GET", "")).body.value).toBe(10);
    expect((await op("POST", "/increment")).body.value).toBe(11);
    expect((await op("POST", "/increment", { by: 5 })).body.value).toBe(16);
    expect((await op("POST", "/decrement", { by: 20 })).body.value).toBe(-4);
    expect((await op("PUT", "", { value: 42 })).body.value).toBe(42);
    expect((await op("GET", "")).body).toMatchObject({ value: 42, min: null, max: null, window_resets_at: null });
  });

  it("compare-and-set writes only on the expected value", async () => {
    const { op } = await counter();
    expect((await op("POST", "/compare-and-set", { expected: 0, value: 7 })).body.value).toBe(7);
    const lost = await op("POST", "/compare-and-set", { expected: 0, value: 9 });
    expect(lost.status).toBe(409);
    expect(lost.body.detail).toContain("holds 7");
  });

  it("refuses to cross a bound with 409 and does not charge", async () => {
    const { op, token } = await counter({ initial: 1, min: 0, max: 2 });
    expect((await op("POST", "/increment")).body.value).toBe(2);
    const spent = (await balanceOf(token)).spent_usd;
    const over = await op("POST", "/increment");
    expect(over.status).toBe(409);
    expect(over.body.code).toBe("conflict");
    const under = await op("POST", "/decrement", { by: 3 });
    expect(under.status).toBe(409);
    expect((await op("GET", "")).body.value).toBe(2);
    expect((await balanceOf(token)).spent_usd).toBeCloseTo(spent + 0.0001, 6); // only the GET
  });

  it("resets to initial at each window", async () => {
    const { op, id } = await counter({ initial: 3, reset_every_seconds: 60 });
    expect((await op("POST", "/increment", { by: 4 })).body.value).toBe(7);
    await advance(id, 61_000); // a window and a bit
    const after = await op("GET", "");
    expect(after.body.value).toBe(3);
    expect(Date.parse(after.body.window_resets_at)).toBeGreaterThan(Date.now() + 61_000);
  });

  it("validates bounds and steps", async () => {
    const { token } = await buyCredits(1);
    const bad = await call("POST", "/v1/counters", { body: { min: 5, max: 1 }, headers: { authorization: `Bearer ${token}` } });
    expect(bad.status).toBe(422);
    const { op } = await counter();
    const zero = await op("POST", "/increment", { by: 0 });
    expect(zero.status).toBe(422);
    expect(zero.body.errors[0].path).toBe("by");
    expect((await op("POST", "/increment", { by: 1.5 })).status).toBe(422);
  });

  it("exports its value", async () => {
    const { op, id, mgmt } = await counter({ initial: 2 });
    await op("POST", "/increment");
    const res = await call("GET", `/v1/resources/${id}/export`, { headers: managed(mgmt) });
    expect((await json(res)).data.value).toBe(3);
  });
});
