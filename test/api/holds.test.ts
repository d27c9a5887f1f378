/**
 * Data-plane calls are charged against holds (a float reserved at the account
 * and spent inside the resource). These show that money is never lost, stuck
 * or counted twice on the way.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { decodeBase62, encodeBase62 } from "../../src/auth/base62";
import { checksum, hashToken } from "../../src/auth/tokens";
import { accountStub } from "../../src/stubs";
import { advance, balanceOf, buyCredits, call, createResource, json, managed } from "../harness";

type Charge = {
  operation: string;
  amount: number;
  at: number;
  token_id: string;
  resource_id: string | null;
  request_id: string;
  ref: string | null;
};

async function ledgerCharges(tokenId: string): Promise<Charge[]> {
  const stub = env.ACCOUNTS.get(env.ACCOUNTS.idFromName(tokenId.split(".")[0]!));
  return runInDurableObject(stub, (_o, state) =>
    state.storage.sql
      .exec<Charge>(
        "SELECT operation, amount, at, token_id, resource_id, request_id, ref FROM ledger WHERE type = " +
          "'charge' ORDER BY seq",
      )
      .toArray(),
  );
}

const increment = (id: string, mgmt: string, token: string) =>
  call("POST", `/v1/counters/${id}/increment`, { headers: managed(mgmt, token) });

describe("holds", () => {
  it("an idle hold is settled by the resource's alarm: ledger rows appear without anyone asking", async () => {
    const { token, tokenId } = await buyCredits(1);
    const { id, mgmt } = await createResource("counters", token, { ttl_seconds: 86400 });
    const requestIds: string[] = [];
    const before = Date.now();
    for (let i = 0; i < 3; i++) {
      const res = await increment(id, mgmt, token);
      expect(res.status).toBe(200);
      requestIds.push(res.headers.get("x-request-id")!);
    }
    expect((await ledgerCharges(tokenId)).map((r) => r.operation)).toEqual(["counters.create"]);

    await advance(id, 5_001); // a hold is settled 5 s after it was taken

    const rows = await ledgerCharges(tokenId);
    expect(rows.map((r) => r.operation)).toEqual([
      "counters.create",
      "counters.increment",
      "counters.increment",
      "counters.increment",
    ]);
    // Each call's own row, in call order: the settlement's charges written in one statement keep every field.
    const charged = rows.slice(1);
    expect(charged.map((r) => r.request_id)).toEqual(requestIds);
    for (const r of charged) {
      expect(r).toMatchObject({ amount: 100, token_id: tokenId, resource_id: id });
      expect(r.ref).toMatch(/^[0-9a-f-]{36}$/); // the hold it was captured from
      expect(r.at).toBeGreaterThanOrEqual(before);
    }
    expect((await balanceOf(token)).spent_usd).toBeCloseTo(0.001 + 0.0003, 6);
  });

  it("money held by one resource is brought back when another call needs it", async () => {
    const { token } = await buyCredits(0.25);
    const big = await createResource("counters", token, { ttl_seconds: 240 * 86400 }); // $0.24, $0.01 left
    expect((await increment(big.id, big.mgmt, token)).status).toBe(200); // holds the remaining $0.01
    const small = await call("POST", "/v1/counters", {
      body: { ttl_seconds: 86400 },
      headers: { authorization: `Bearer ${token}` },
    });
    expect(small.status, await small.clone().text()).toBe(201); // $0.001, reclaimed from the hold
    const balance = await balanceOf(token);
    expect(balance.spent_usd).toBeCloseTo(0.24 + 0.0001 + 0.001, 6);
    expect(balance.balance_usd).toBeCloseTo(0.0089, 6);
  });

  it("cancelling settles the resource's holds first", async () => {
    const { token, tokenId } = await buyCredits(1);
    const { id, mgmt } = await createResource("counters", token, { ttl_seconds: 86400 });
    await increment(id, mgmt, token);
    const cancelled = await json(await call("DELETE", `/v1/resources/${id}`, { headers: managed(mgmt) }));
    expect(cancelled.charged_usd).toBeCloseTo(0.0011, 6);
    expect((await ledgerCharges(tokenId)).map((r) => r.operation)).toEqual(["counters.create", "counters.increment"]);
    expect((await balanceOf(token)).balance_usd).toBeCloseTo(1 - 0.0011, 6);
  });

  it("a wrong secret for a token that holds money here is refused and charges nothing", async () => {
    const { token } = await buyCredits(1);
    const { id, mgmt } = await createResource("counters", token, {});
    expect((await increment(id, mgmt, token)).status).toBe(200);
    // Same account and token id, another secret, a valid checksum: only the hash comparison can refuse it.
    const payload = decodeBase62(token.slice(3, -6), 56)!;
    payload.set(crypto.getRandomValues(new Uint8Array(32)), 24);
    const body = `zv_${encodeBase62(payload)}`;
    const res = await increment(id, mgmt, body + checksum(body));
    expect(res.status).toBe(401);
    expect((await balanceOf(token)).spent_usd).toBeCloseTo(0.03 + 0.0001, 6);
  });

  it("the next hold is taken in the background once the current is half used, and all of it is settled", async () => {
    const { token, tokenId } = await buyCredits(1);
    const { id, mgmt } = await createResource("counters", token, { ttl_seconds: 86400 });
    const holds = () =>
      runInDurableObject(env.RESOURCES.get(env.RESOURCES.idFromName(id)), (_o, state) =>
        state.storage.sql
          .exec<{ amount: number; used: number }>(
            "SELECT amount, (SELECT coalesce(sum(amount), 0) FROM billing_charges c WHERE c.hold_id = " +
              "h.hold_id) AS used FROM billing_holds h ORDER BY rowid",
          )
          .toArray(),
      );
    for (let i = 0; i < 51; i++) expect((await increment(id, mgmt, token)).status).toBe(200);
    // The first hold (100 calls) is past half: the second came while the first still pays.
    let held = await holds();
    for (let i = 0; i < 50 && held.length < 2; i++) held = await holds();
    expect(held).toHaveLength(2);
    expect(held[0]).toMatchObject({ amount: 100 * 100, used: 51 * 100 });
    expect(held[1]!.used).toBe(0);
    for (let i = 0; i < 60; i++) expect((await increment(id, mgmt, token)).status).toBe(200);
    // Ending settles every hold, the one taken ahead included: exactly the calls made are charged.
    await call("DELETE", `/v1/resources/${id}`, { headers: managed(mgmt) });
    expect((await ledgerCharges(tokenId)).filter((r) => r.operation === "counters.increment")).toHaveLength(111);
    expect((await balanceOf(token)).spent_usd).toBeCloseTo(0.001 + 111 * 0.0001, 6);
  });
  it("paid calls arriving together commit together, each charged once; one the engine refuses rolls back", async () => {
    const { token, tokenId } = await buyCredits(1);
    const { id, mgmt } = await createResource("counters", token, { ttl_seconds: 86400, max: 10 });
    expect((await increment(id, mgmt, token)).status).toBe(200); // takes the hold: the rest find it
    // 30 at once: they are run in a few shared transactions, and only 9 fit under the maximum.
    const results = await Promise.all(Array.from({ length: 30 }, () => increment(id, mgmt, token)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(9);
    expect(statuses.filter((s) => s === 409)).toHaveLength(21);
    const values = (
      await Promise.all(results.filter((r) => r.status === 200).map((r) => json<{ value: number }>(r)))
    ).map((b) => b.value);
    expect(values.sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10]);
    // The refused calls left no charge behind, in the resource or, once settled, in the ledger.
    const charges = await runInDurableObject(
      env.RESOURCES.get(env.RESOURCES.idFromName(id)),
      (_o, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM billing_charges").one().n,
    );
    expect(charges).toBe(10);
    await call("DELETE", `/v1/resources/${id}`, { headers: managed(mgmt) });
    expect((await ledgerCharges(tokenId)).filter((r) => r.operation === "counters.increment")).toHaveLength(10);
    expect((await balanceOf(token)).spent_usd).toBeCloseTo(0.001 + 10 * 0.0001, 6);
  });

  it(
    "a cold burst of 600 parallel paid calls all succeed, each counted and charged once: " +
      "one hold covers the calls waiting, and batches are capped",
    async () => {
      const { token, tokenId } = await buyCredits(1);
      const { id, mgmt } = await createResource("counters", token, { ttl_seconds: 86400 });
      const results = await Promise.all(Array.from({ length: 600 }, () => increment(id, mgmt, token)));
      const refused = results.find((r) => r.status !== 200);
      expect(refused && (await refused.text())).toBeUndefined();
      const values = (await Promise.all(results.map((r) => json<{ value: number }>(r)))).map((b) => b.value);
      expect(values.sort((a, b) => a - b)).toEqual(Array.from({ length: 600 }, (_, i) => i + 1));
      await call("DELETE", `/v1/resources/${id}`, { headers: managed(mgmt) });
      expect((await ledgerCharges(tokenId)).filter((r) => r.operation === "counters.increment")).toHaveLength(600);
      expect((await balanceOf(token)).spent_usd).toBeCloseTo(0.001 + 600 * 0.0001, 6);
    },
  );

  it(
    "a settlement never captures more than its hold reserved: " +
      "the charges up to the first that would pass it, in order",
    async () => {
      const { token, tokenId } = await buyCredits(1);
      const account = accountStub(env, tokenId);
      const credential = { tokenId, tokenHash: hashToken(token) };
      const grant = await account.hold({
        ...credential,
        resourceId: "r_settlement-cap-test",
        price: 100,
        want: 250,
        settlements: [],
      });
      if (!grant.ok) throw new Error(JSON.stringify(grant));
      expect(grant.value.amount).toBe(200); // a whole multiple of the price
      const charges = [
        [1, "counters.increment", 100, "req-1"],
        [2, "counters.increment", 100, "req-2"],
        [3, "counters.increment", 100, "req-3"],
      ];
      await account.settle({ settlements: [{ holdId: grant.value.holdId, charges: JSON.stringify(charges) }] });
      const rows = (await ledgerCharges(tokenId)).filter((r) => r.ref === grant.value.holdId);
      expect(rows.map((r) => [r.at, r.operation, r.amount, r.request_id])).toEqual(charges.slice(0, 2));
      expect((await balanceOf(token)).spent_usd).toBeCloseTo(0.0002, 6);
      // Settled once: the same settlement again captures nothing more.
      await account.settle({ settlements: [{ holdId: grant.value.holdId, charges: JSON.stringify(charges) }] });
      expect((await balanceOf(token)).spent_usd).toBeCloseTo(0.0002, 6);
    },
  );
});
