/**
 * What the operator does about a complaint or an incident, through HTTP: give back one call's charges
 * (to the balance, off the receipt, once), list the deliveries that died, and send one again.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  advance,
  balanceOf,
  buyCredits,
  call,
  createResource,
  json,
  managed,
  problemOf,
  received,
  usd,
  type DeliveryPage,
  type PriceList,
  type Receipt,
} from "../harness";

const ADMIN = { authorization: "Bearer test-admin-token" };

/** What a refund answers (src/operator/admin-actions.ts). */
interface Refunded {
  token_id: string;
  request_id: string;
  refunded_usd: number;
  charges: number;
  balance_usd: number;
}
/** A page of dead deliveries (the DeadDeliveryPage schema). */
interface DeadPage {
  items: { delivery_id: string; resource_id: string; kind: string | null; died_at: string }[];
  next_cursor: string | null;
}
const unique = () => crypto.randomUUID().slice(0, 8);

const refund = (body: unknown, headers: Record<string, string> = ADMIN) =>
  call("POST", "/v1/admin/refunds", { body, headers });

async function paidIncrement(id: string, mgmt: string, credit: string): Promise<string> {
  const res = await call("POST", `/v1/counters/${id}/increment`, { body: { by: 1 }, headers: managed(mgmt, credit) });
  expect(res.status, await res.clone().text()).toBe(200);
  return res.headers.get("X-Request-Id")!;
}

describe("an operator refund", () => {
  it("gives back exactly what one call was charged, once, and takes it off the receipt", async () => {
    const { token, tokenId } = await buyCredits(1);
    const counter = await createResource("counters", token);
    const first = await paidIncrement(counter.id, counter.mgmt, token);
    await paidIncrement(counter.id, counter.mgmt, token);
    const before = await balanceOf(token);

    // The call's charge may still sit in the resource's hold: the refund settles it first.
    const res = await refund({
      token_id: tokenId,
      request_id: first,
      reason: "The caller reported a double increment.",
    });
    const out = await json<Refunded>(res);
    expect(res.status, JSON.stringify(out)).toBe(200);
    const price = (await json<PriceList>(await call("GET", "/v1/prices"))).operations.find(
      (o: { operation: string }) => o.operation === "counters.increment",
    )!.price_usd;
    expect(out).toMatchObject({ token_id: tokenId, request_id: first, refunded_usd: price, charges: 1 });
    expect(usd(out.balance_usd)).toBe(usd(before.balance_usd) + usd(price));
    expect(usd((await balanceOf(token)).balance_usd)).toBe(usd(before.balance_usd) + usd(price));

    const again = await json(await refund({ token_id: tokenId, request_id: first, reason: "again" }));
    expect(again).toMatchObject({ refunded_usd: 0, charges: 0 });
    const receipt = await json<Receipt>(
      await call("GET", "/v1/receipts", { headers: { authorization: `Bearer ${token}` } }),
    );
    expect(receipt.statement.charges.map((c: { request_id: string }) => c.request_id)).not.toContain(first);
  });

  it("reaches a sub-token's call through its root token, and gives nothing for a call of another token", async () => {
    const { token, tokenId } = await buyCredits(1);
    const child = await json<{ credit_token: string }>(
      await call("POST", "/v1/credits/subtokens", {
        body: { cap_usd: 0.5, label: "worker", days: 1 },
        headers: { authorization: `Bearer ${token}` },
      }),
    );
    const counter = await createResource("counters", child.credit_token);
    const spentBefore = usd((await balanceOf(child.credit_token)).spent_usd);
    const request = await paidIncrement(counter.id, counter.mgmt, child.credit_token);
    const stranger = await buyCredits(1);
    expect(
      await json(await refund({ token_id: stranger.tokenId, request_id: request, reason: "wrong token" })),
    ).toMatchObject({ refunded_usd: 0, charges: 0 });
    expect(
      await json(await refund({ token_id: tokenId, request_id: request, reason: "sub-agent loop" })),
    ).toMatchObject({ charges: 1 });
    // The sub-token's own spend (which its cap counts) is back where it was before the call.
    expect(usd((await balanceOf(child.credit_token)).spent_usd)).toBe(spentBefore);
  });

  it("refuses bad input with 422, an unknown token with 404, and anyone but the operator", async () => {
    const { tokenId } = await buyCredits(1);
    const good = { token_id: tokenId, request_id: "req_abc", reason: "why" };
    for (const body of [
      { ...good, token_id: "zv_notanid" },
      { ...good, request_id: "abc\u0000" },
      { ...good, reason: "" },
      { ...good, reason: "x".repeat(501) },
      { ...good, extra: true },
      { token_id: tokenId },
    ]) {
      const res = await refund(body);
      expect(res.status, JSON.stringify(body)).toBe(422);
    }
    expect((await problemOf(await refund({ ...good, token_id: "acct_DoesNotExist1" }))).code).toBe("not_found");
    expect((await refund(good, {})).status).toBe(401);
    expect((await refund(good, { authorization: "Bearer wrong" })).status).toBe(401);
  });
});

describe("dead deliveries", () => {
  it("are listed with their kind, and one sent again by the operator gets through and leaves the list", async () => {
    const { token } = await buyCredits(1);
    const name = `operator-retry-${unique()}`;
    // 500 for the first 8 requests: the queue's 8 attempts all fail, and the operator's retry is the 9th.
    const counter = await createResource("counters", token, {
      ttl_seconds: 2 * 3600,
      notify_url: `${env.TEST_RECEIVER_URL}/fail/8/${name}`,
    });
    await advance(counter.id, 3600_000 + 60_000);
    let dead: { delivery_id: string; resource_id: string; kind: string | null } | undefined;
    for (let i = 0; i < 300 && !dead; i++) {
      const page = await json<DeadPage>(await call("GET", "/v1/admin/deliveries/dead?limit=100", { headers: ADMIN }));
      dead = page.items.find((d: { resource_id: string }) => d.resource_id === counter.id);
      if (!dead) await new Promise((r) => setTimeout(r, 100));
    }
    expect(dead).toMatchObject({ kind: "counters", died_at: expect.any(String) });

    const res = await call("POST", `/v1/admin/deliveries/${dead!.delivery_id}/retry`, { headers: ADMIN });
    expect(res.status, await res.clone().text()).toBe(200);
    const arrivals = await received(name, 9);
    expect(arrivals.at(-1)!.headers["webhook-id"]).toBe(dead!.delivery_id);
    for (let i = 0; i < 100; i++) {
      const page = await json<DeadPage>(await call("GET", "/v1/admin/deliveries/dead?limit=100", { headers: ADMIN }));
      if (!page.items.some((d: { delivery_id: string }) => d.delivery_id === dead!.delivery_id)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const log = await json<DeliveryPage>(
      await call("GET", `/v1/counters/${counter.id}/deliveries`, { headers: managed(counter.mgmt) }),
    );
    expect(log.items.find((d: { id: string }) => d.id === dead!.delivery_id)).toMatchObject({ status: "delivered" });
    const page = await json<DeadPage>(await call("GET", "/v1/admin/deliveries/dead?limit=100", { headers: ADMIN }));
    expect(page.items.map((d: { delivery_id: string }) => d.delivery_id)).not.toContain(dead!.delivery_id);
  });

  it("pages newest first, refuses a bad cursor, and knows no delivery that never died", async () => {
    const now = Date.now();
    const ids = [0, 1, 2].map((i) => `evt_page${i}${unique()}`);
    await env.DB.batch(
      ids.map((id, i) => env.DB.prepare("INSERT INTO deliveries_dead VALUES (?, 'r_gone', ?)").bind(id, now + 1e9 + i)),
    );
    const first = await json<DeadPage>(await call("GET", "/v1/admin/deliveries/dead?limit=2", { headers: ADMIN }));
    expect(first.items.map((d: { delivery_id: string }) => d.delivery_id)).toEqual([ids[2], ids[1]]);
    expect(first.items[0]!.kind).toBeNull();
    const second = await json<DeadPage>(
      await call("GET", `/v1/admin/deliveries/dead?limit=2&cursor=${first.next_cursor}`, { headers: ADMIN }),
    );
    expect(second.items[0]!.delivery_id).toBe(ids[0]);
    expect((await call("GET", "/v1/admin/deliveries/dead?cursor=%00bad", { headers: ADMIN })).status).toBe(422);
    expect(
      (await problemOf(await call("POST", "/v1/admin/deliveries/evt_neverdied/retry", { headers: ADMIN }))).code,
    ).toBe("not_found");
    await env.DB.batch(ids.map((id) => env.DB.prepare("DELETE FROM deliveries_dead WHERE delivery_id = ?").bind(id)));
  });
});
