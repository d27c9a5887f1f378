/**
 * idempotency (the kind; idempotency.test.ts covers the Idempotency-Key header), per docs/kinds.md:
 * claim → new / in_flight (409) / duplicate / mismatch (422), store the result, lock timeout, window expiry.
 * Time is moved by editing the stored times, never waited for.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { idempotency } from "../../src/kinds/memory/idempotency";
import type { exportAll } from "../../src/kinds/memory/idempotency/store";
import type { OpNames, OpOutput } from "../../src/kind/kind";
import {
  advance,
  balanceOf,
  buyCredits,
  call,
  createResource,
  json,
  managed,
  mcpTool,
  opsOn,
  stubOf,
  type Problem,
  type ResourceExport,
} from "../harness";

/** What idempotency's op `N` answers. */
type Out<N extends OpNames<typeof idempotency>> = OpOutput<typeof idempotency, N>;
/** A claim that got the key. */
type Claimed = Extract<Out<"claim">, { outcome: "new" }>;

async function firewall(body: Record<string, unknown> = {}) {
  const { token } = await buyCredits(1);
  const { id, mgmt, record } = await createResource("idempotency", token, body);
  const { reply: op } = opsOn(idempotency, id, mgmt, token);
  const claim = <T = Record<string, unknown>>(key: string, fingerprint: string, extra: Record<string, unknown> = {}) =>
    op<T>("POST", "/claim", { key, fingerprint, ...extra });
  return { token, id, mgmt, record, op, claim };
}

async function storedKeys(id: string): Promise<string[]> {
  return runInDurableObject(stubOf(id), (_o, state) =>
    state.storage.sql
      .exec<{ key: string }>("SELECT key FROM idem_keys ORDER BY id")
      .toArray()
      .map((r) => r.key),
  );
}

describe("idempotency", () => {
  it("20 parallel claims of one key: exactly one new, the rest 409 in_flight, and those are not charged", async () => {
    const { claim, token } = await firewall();
    const before = (await balanceOf(token)).spent_usd;
    const results = await Promise.all(Array.from({ length: 20 }, () => claim("order-42", "sha256:abc")));
    const fresh = results.filter((r) => r.status === 200);
    expect(fresh).toHaveLength(1);
    expect(fresh[0]!.body).toMatchObject({ outcome: "new", key: "order-42", attempt: 1 });
    expect(fresh[0]!.body.lock_token).toMatch(/^lock_[0-9a-f]{32}$/);
    const busy = results.filter((r) => r.status === 409);
    expect(busy).toHaveLength(19);
    expect(busy[0]!.headers.get("content-type")).toContain("application/problem+json");
    expect(busy[0]!.body).toMatchObject({
      code: "idempotency_in_flight",
      outcome: "in_flight",
      key: "order-42",
      lock_expires_at: fresh[0]!.body.lock_expires_at,
    });
    expect(Number(busy[0]!.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await balanceOf(token)).spent_usd).toBeCloseTo(before + 0.0001, 6);
  });

  it("stores the result: later claims get duplicate with it; another fingerprint is 422 mismatch", async () => {
    const { claim, op } = await firewall();
    const first = await claim("pay-1", "fp-a");
    const token = first.body.lock_token;
    const result = { status: 201, body: { charge: "ch_1", amount: 500 } };
    const stored = await op("POST", "/complete", { key: "pay-1", lock_token: token, result });
    expect(stored.status, JSON.stringify(stored.body)).toBe(200);
    expect(stored.body).toMatchObject({ key: "pay-1", state: "completed", lock_expires_at: null, result });

    for (let i = 0; i < 3; i++) {
      const again = await claim("pay-1", "fp-a");
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ outcome: "duplicate", key: "pay-1", result });
      expect(again.body.lock_token).toBeUndefined();
    }
    const other = await claim("pay-1", "fp-b");
    expect(other.status).toBe(422);
    expect(other.body).toMatchObject({ code: "idempotency_mismatch", outcome: "mismatch", key: "pay-1" });

    // A retried store with the same result is harmless; another result for the same request is refused.
    expect((await op("POST", "/complete", { key: "pay-1", lock_token: token, result })).status).toBe(200);
    expect((await op("POST", "/complete", { key: "pay-1", lock_token: token, result: { other: true } })).status).toBe(
      409,
    );
    // A mismatch is checked while the key is still locked, too.
    await claim("pay-2", "fp-a");
    expect((await claim("pay-2", "fp-z")).status).toBe(422);
  });

  it("a lapsed lock lets the next identical claim take the key over; the old token stops working", async () => {
    const { claim, op, id } = await firewall({ lock_timeout_seconds: 120 });
    const first = await claim<Claimed>("job-7", "fp");
    expect(Date.parse(first.body.lock_expires_at) - Date.now()).toBeGreaterThan(110_000);
    expect((await claim("job-7", "fp")).status).toBe(409);

    // The holder crashed: its lock runs out.
    await advance(id, 121_000);
    expect((await op("GET", "/keys/job-7")).body.state).toBe("lapsed");
    expect((await claim("job-7", "other-fp")).status).toBe(422); // still only for the same request
    const second = await claim("job-7", "fp");
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ outcome: "new", attempt: 2 });
    expect(second.body.lock_token).not.toBe(first.body.lock_token);

    const late = await op("POST", "/complete", { key: "job-7", lock_token: first.body.lock_token, result: "late" });
    expect(late.status).toBe(409);
    expect(late.body.code).toBe("conflict");
    expect(
      (await op("POST", "/complete", { key: "job-7", lock_token: second.body.lock_token, result: "done" })).status,
    ).toBe(200);
    expect((await claim("job-7", "fp")).body).toMatchObject({ outcome: "duplicate", result: "done" });
  });

  it("a lock lapsed but not taken over still accepts its holder's result", async () => {
    const { claim, op, id } = await firewall();
    const first = await claim("slow", "fp");
    await advance(id, 301_000); // the default lock timeout passes
    expect(
      (await op("POST", "/complete", { key: "slow", lock_token: first.body.lock_token, result: null })).status,
    ).toBe(200);
    expect((await claim("slow", "fp")).body).toMatchObject({ outcome: "duplicate", result: null });
  });

  it("a claim may set its own lock timeout, within the window", async () => {
    const { claim } = await firewall({ window_seconds: 600, lock_timeout_seconds: 30 });
    const short = await claim<Claimed>("a", "fp", { lock_seconds: 5 });
    expect(Date.parse(short.body.lock_expires_at) - Date.now()).toBeLessThanOrEqual(5000);
    const tooLong = await claim<Problem>("b", "fp", { lock_seconds: 601 });
    expect(tooLong.status).toBe(422);
    expect(tooLong.body.errors![0]!.path).toBe("lock_seconds");
  });

  it("release forgets the key, so the next claim is new (with any fingerprint)", async () => {
    const { claim, op } = await firewall();
    const first = await claim("k", "fp");
    expect((await op("POST", "/release", { key: "k", lock_token: "lock_" + "0".repeat(32) })).status).toBe(409);
    const released = await op("POST", "/release", { key: "k", lock_token: first.body.lock_token });
    expect(released.body).toEqual({ key: "k", released: true });
    expect((await op("GET", "/keys/k")).status).toBe(404);
    expect((await claim("k", "fp-2")).body).toMatchObject({ outcome: "new", attempt: 1 });
  });

  it("forgets keys after the window: lazily on the next call, and for good by its timer", async () => {
    const { claim, op, id, record } = await firewall({ window_seconds: 3600 });
    expect(record.config).toMatchObject({ window_seconds: 3600, lock_timeout_seconds: 300 });
    const a = await claim<Claimed>("a", "fp");
    expect(Date.parse(a.body.expires_at) - Date.now()).toBeGreaterThan(3590_000);
    await op("POST", "/complete", { key: "a", lock_token: a.body.lock_token, result: 1 });
    await claim("b", "fp");
    await advance(id, 1800_000);
    await claim("c", "fp");

    // The window of a and b passes; c's, claimed half an hour later, does not.
    await advance(id, 1801_000);
    expect((await op("GET", "/keys/a")).status).toBe(404);
    expect((await op<Out<"keys">>("GET", "/keys")).body.items.map((k: { key: string }) => k.key)).toEqual(["c"]);
    // The alarms that ran as the time passed deleted the rows for good.
    expect(await storedKeys(id)).toEqual(["c"]);
    // A forgotten key is claimable afresh, with any fingerprint.
    expect((await claim("a", "new-fp")).body).toMatchObject({ outcome: "new", attempt: 1 });
  });

  it("gets, lists by state with a cursor, and deletes keys", async () => {
    const { claim, op } = await firewall();
    const tokens: Record<string, string> = {};
    for (const key of ["k1", "k2", "k3", "k4", "k5"])
      tokens[key] = (await claim<Claimed>(key, `fp-${key}`)).body.lock_token;
    await op("POST", "/complete", { key: "k2", lock_token: tokens.k2, result: { ok: 2 } });
    await op("POST", "/complete", { key: "k4", lock_token: tokens.k4, result: { ok: 4 } });

    const k2 = await op("GET", "/keys/k2");
    expect(k2.body).toMatchObject({
      key: "k2",
      state: "completed",
      fingerprint: "fp-k2",
      attempts: 1,
      result: { ok: 2 },
      result_bytes: 8,
    });
    expect((await op("GET", "/keys/k1")).body).toMatchObject({ state: "locked", completed_at: null });
    expect((await op("GET", "/keys/k1")).body.result).toBeUndefined();

    const page1 = await op<Out<"keys">>("GET", "/keys?limit=2");
    expect(page1.body.items.map((k: { key: string }) => k.key)).toEqual(["k1", "k2"]);
    expect(page1.body.items[1]!.result).toBeUndefined();
    const page2 = await op<Out<"keys">>("GET", `/keys?limit=2&cursor=${page1.body.next_cursor}`);
    expect(page2.body.items.map((k: { key: string }) => k.key)).toEqual(["k3", "k4"]);
    const page3 = await op("GET", `/keys?limit=2&cursor=${page2.body.next_cursor}`);
    expect(page3.body).toMatchObject({ items: [{ key: "k5" }], next_cursor: null });
    expect(
      (await op<Out<"keys">>("GET", "/keys?state=completed")).body.items.map((k: { key: string }) => k.key),
    ).toEqual(["k2", "k4"]);
    expect((await op<Out<"keys">>("GET", "/keys?state=locked")).body.items.map((k: { key: string }) => k.key)).toEqual([
      "k1",
      "k3",
      "k5",
    ]);

    expect((await op("DELETE", "/keys/k3")).body).toEqual({ key: "k3", deleted: true });
    expect((await op("DELETE", "/keys/k3")).status).toBe(404);
    expect((await op("POST", "/complete", { key: "k3", lock_token: tokens.k3, result: 1 })).status).toBe(404);
  });

  it("takes keys with URL-special characters as a path segment", async () => {
    const { claim, op } = await firewall();
    const key = "agent/42:step?1#a%b";
    expect((await claim(key, "fp")).status).toBe(200);
    const got = await op("GET", `/keys/${encodeURIComponent(key)}`);
    expect(got.status, JSON.stringify(got.body)).toBe(200);
    expect(got.body.key).toBe(key);
    expect((await op("DELETE", `/keys/${encodeURIComponent(key)}`)).status).toBe(200);
  });

  it("enforces its limits with 413 and 422, charging nothing", async () => {
    const { claim, op, token } = await firewall();
    const held = await claim("big", "fp");
    const spent = (await balanceOf(token)).spent_usd;
    const big = await op("POST", "/complete", {
      key: "big",
      lock_token: held.body.lock_token,
      result: "x".repeat(64 * 1024),
    });
    expect(big.status).toBe(413);
    expect(big.body.code).toBe("payload_too_large");
    // no result
    expect((await op("POST", "/complete", { key: "big", lock_token: held.body.lock_token })).status).toBe(422);
    expect((await claim("x".repeat(256), "fp")).status).toBe(422);
    expect((await claim("has space", "fp")).status).toBe(422);
    expect((await claim("..", "fp")).status).toBe(422); // not addressable as a path segment
    expect((await claim("k", "")).status).toBe(422);
    expect((await balanceOf(token)).spent_usd).toBe(spent);
    expect((await claim("...", "fp")).status).toBe(200);
    // Just under the cap fits (the JSON string's quotes count).
    expect(
      (
        await op("POST", "/complete", {
          key: "big",
          lock_token: held.body.lock_token,
          result: "x".repeat(64 * 1024 - 2),
        })
      ).status,
    ).toBe(200);
  });

  it("shows usage, exports every key with its result, and leaves nothing after cancel", async () => {
    const { claim, op, id, mgmt } = await firewall();
    const a = await claim("a", "fp-a");
    await op("POST", "/complete", { key: "a", lock_token: a.body.lock_token, result: { n: 1 } });
    await claim("b", "fp-b");

    const status = await json(await call("GET", `/v1/resources/${id}`, { headers: managed(mgmt) }));
    expect(status.usage).toEqual({ keys: 2, completed: 1, result_bytes: 7 });
    const exported = await json<ResourceExport<ReturnType<typeof exportAll>>>(
      await call("GET", `/v1/resources/${id}/export`, { headers: managed(mgmt) }),
    );
    expect(exported.data.keys).toMatchObject([
      { key: "a", state: "completed", fingerprint: "fp-a", result: { n: 1 } },
      { key: "b", state: "locked", fingerprint: "fp-b" },
    ]);
    expect(JSON.stringify(exported.data)).not.toMatch(/lock_[0-9a-f]{32}/); // lock tokens are the holder's alone

    expect((await call("DELETE", `/v1/resources/${id}`, { headers: managed(mgmt) })).status).toBe(200);
    const tables = await runInDurableObject(stubOf(id), (_o, state) =>
      state.storage.sql.exec("SELECT name FROM sqlite_master WHERE name = 'idem_keys'").toArray(),
    );
    expect(tables).toEqual([]);
  });

  it("works as MCP tools, the key path parameter included", async () => {
    const { token, id, mgmt } = await firewall();
    const tool = (name: string, args: Record<string, unknown>) =>
      mcpTool(token, name, { id, management_token: mgmt, ...args });
    const claimed = await tool("idempotency_claim", { key: "agent/7", fingerprint: "fp" });
    expect(claimed.structuredContent).toMatchObject({ outcome: "new", key: "agent/7" });
    const busy = await tool("idempotency_claim", { key: "agent/7", fingerprint: "fp" });
    expect(busy.isError).toBe(true);
    expect(busy.structuredContent).toMatchObject({ code: "idempotency_in_flight", outcome: "in_flight" });
    expect((await tool("idempotency_get_key", { key: "agent/7" })).structuredContent).toMatchObject({
      key: "agent/7",
      state: "locked",
    });
  });
});
