/**
 * The deliveries kind, per docs/kinds.md and issue 13: a submitted request reaches a real local
 * receiver through the real queue, signed; retried until a 2xx on the default schedule or its own
 * (scaled to no wait here); dead letters listed, retried by hand; a 10 MiB binary body arrives
 * byte-exact and its stored copy is deleted once delivered; an idempotency key sends once; a
 * submission whose dispatch the process never made is sent by the alarm. Bad input is refused
 * uncharged.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { deliveries } from "../../src/kinds/address/deliveries";
import { DISPATCH_GRACE_MS } from "../../src/delivery/outbox-policy";
import { sha256Hex, toBase64 } from "../../src/bytes";
import {
  advance,
  balanceOf,
  buyCredits,
  call,
  createResource,
  json,
  managed,
  opsOn,
  r2Keys,
  received,
  stubOf,
  verifierOf,
} from "../harness";

const receiver = env.TEST_RECEIVER_URL;
const unique = () => crypto.randomUUID().slice(0, 8);

async function outbox(body: Record<string, unknown> = {}) {
  const { token } = await buyCredits(2);
  const created = await createResource("deliveries", token, body);
  return { ...created, token, ...opsOn(deliveries, created.id, created.mgmt, token) };
}

async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  for (let i = 0; i < 150; i++) {
    const v = await read();
    if (ok(v)) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the state was never reached");
}

describe("deliveries", () => {
  it("delivers a submitted request, signed, once per idempotency key; another request under it is 409", async () => {
    const o = await outbox();
    expect(o.record.signing_secret).toMatch(/^whsec_/);
    const name = unique();
    const request = {
      url: `${receiver}/ok/${name}?q=1`,
      method: "PUT",
      headers: { "x-order": "1042" },
      body: { order: 1042 },
      idempotency_key: "order-1042",
    };
    const first = await o.ok("submit", "/requests", request);
    expect(first).toMatchObject({
      duplicate: false,
      delivery: { status: "pending", url: request.url, method: "PUT", retry_delays: null },
    });
    const [hit] = await received(name, 1);
    expect(hit!.path).toBe(`/ok/${name}?q=1`);
    expect(hit!.headers["x-order"]).toBe("1042");
    expect(hit!.headers["content-type"]).toBe("application/json");
    expect(verifierOf(o.record).verify(hit!.body, hit!.headers)).toEqual({ order: 1042 });
    expect(hit!.headers["webhook-id"]).toBe(first.delivery_id);
    const done = await eventually(
      () => o.ok("get_delivery", `/requests/${first.delivery_id}`),
      (d) => d.status === "delivered",
    );
    expect(done).toMatchObject({ attempts: 1, attempt_log: [{ outcome: "delivered", status_code: 200 }] });

    const again = await o.ok("submit", "/requests", request);
    expect(again).toMatchObject({ delivery_id: first.delivery_id, duplicate: true, delivery: { status: "delivered" } });
    const before = (await balanceOf(o.token)).balance_usd;
    expect(await o.reply("POST", "/requests", { ...request, body: { order: 1043 } })).toMatchObject({
      status: 409,
      body: { code: "conflict" },
    });
    expect((await balanceOf(o.token)).balance_usd).toBe(before);
    await new Promise((r) => setTimeout(r, 300));
    expect(await received(name, 1)).toHaveLength(1);
    expect(await o.ok("info", "")).toMatchObject({ counts: { delivered: 1, pending: 0 } });
  });

  it("retries on the default schedule until a 2xx", async () => {
    const o = await outbox();
    const name = unique();
    const { delivery_id } = await o.ok("submit", "/requests", { url: `${receiver}/fail/2/${name}`, body: "hello" });
    const done = await eventually(
      () => o.ok("get_delivery", `/requests/${delivery_id}`),
      (d) => d.status === "delivered",
    );
    expect(done.attempt_log.map((a) => a.outcome)).toEqual(["failed", "failed", "delivered"]);
    const hits = await received(name, 3);
    expect(hits.map((h) => h.status)).toEqual([500, 500, 200]);
    expect(new Set(hits.map((h) => h.headers["webhook-id"])).size).toBe(1);
  });

  it("a custom schedule ends in the dead letters, listed by status and retried by hand", async () => {
    const o = await outbox({ retry_delays: [1, 1, 1, 1] });
    const name = unique();
    const own = await o.ok("submit", "/requests", { url: `${receiver}/down/${name}`, body: "x", retry_delays: [1, 1] });
    expect(own.delivery.retry_delays).toEqual([1, 1]);
    const dead = await eventually(
      () => o.ok("get_delivery", `/requests/${own.delivery_id}`),
      (d) => d.status === "dead",
    );
    expect(dead.attempts).toBe(3);
    const name2 = unique();
    const resourceWide = await o.ok("submit", "/requests", { url: `${receiver}/down/${name2}` });
    expect(
      (
        await eventually(
          () => o.ok("get_delivery", `/requests/${resourceWide.delivery_id}`),
          (d) => d.status === "dead",
        )
      ).attempts,
    ).toBe(5);

    const letters = await o.ok("list", "/requests?status=dead");
    expect(letters.items.map((d) => d.id)).toEqual([own.delivery_id, resourceWide.delivery_id]);
    expect((await o.ok("list", "/requests?status=delivered")).items).toEqual([]);

    const retried = await call("POST", `/v1/deliveries/${o.id}/deliveries/${own.delivery_id}/retry`, {
      headers: managed(o.mgmt),
    });
    expect(retried.status).toBe(200);
    const again = await eventually(
      () => o.ok("get_delivery", `/requests/${own.delivery_id}`),
      (d) => d.status === "dead" && d.attempts > 3,
    );
    expect(again.attempts).toBe(6);
  });

  it("a 10 MiB binary body arrives byte-exact; its stored copy goes once delivered", async () => {
    const o = await outbox();
    const name = unique();
    const bytes = new Uint8Array(10 * 1024 * 1024).map((_, i) => (i * 31 + (i >> 13)) & 0xff);
    const { delivery_id, delivery } = await o.ok("submit", "/requests", {
      url: `${receiver}/ok/${name}`,
      body_base64: toBase64(bytes),
    });
    expect(delivery.body_stored).toBe(true);
    const [hit] = await received(name, 1);
    expect(sha256Hex(Uint8Array.from(atob(hit!.raw), (c) => c.charCodeAt(0)))).toBe(sha256Hex(bytes));
    expect(hit!.headers["content-type"]).toBe("application/octet-stream");
    await eventually(
      () => o.ok("get_delivery", `/requests/${delivery_id}`),
      (d) => d.status === "delivered",
    );
    expect(
      await eventually(
        () => r2Keys(o.id),
        (keys) => keys.length === 0,
      ),
    ).toEqual([]);
  });

  it("a submission whose dispatch the process never made is sent by the alarm, once", async () => {
    const o = await outbox();
    const name = unique();
    await stubOf(o.id).injectFaults({ skipDispatches: 1 });
    const { delivery_id } = await o.ok("submit", "/requests", { url: `${receiver}/ok/${name}`, body: { n: 1 } });
    await new Promise((r) => setTimeout(r, 300));
    expect(await o.ok("get_delivery", `/requests/${delivery_id}`)).toMatchObject({ status: "pending", sends: 0 });
    await advance(o.id, DISPATCH_GRACE_MS);
    await received(name, 1);
    expect(
      await eventually(
        () => o.ok("get_delivery", `/requests/${delivery_id}`),
        (d) => d.status === "delivered",
      ),
    ).toMatchObject({ sends: 1, attempts: 1 });
  });

  it("refuses bad submissions with a problem, uncharged", async () => {
    const o = await outbox();
    const before = (await balanceOf(o.token)).balance_usd;
    const url = `${receiver}/ok/${unique()}`;
    const cases: [unknown, number][] = [
      [{ url: "ftp://example.com/x" }, 422],
      [{ url: "not a url" }, 422],
      [{ url, body: "a", body_base64: "YQ==" }, 422],
      [{ url, body_base64: "not base64!" }, 422],
      [{ url, headers: { "x-a": "1\r\nx-b: 2" } }, 422],
      [{ url, headers: { "webhook-signature": "forged" } }, 422],
      [{ url, retry_delays: [1, 1, 1, 1, 1, 1, 1, 1] }, 422],
      [{ url, retry_delays: [43_201] }, 422],
      [{ url, method: "TRACE" }, 422],
      [{ url, unknown: 1 }, 422],
      [{ url, idempotency_key: "" }, 422],
      [{ url, body: "x".repeat(10 * 1024 * 1024 + 1) }, 413],
    ];
    for (const [body, status] of cases)
      expect((await o.reply("POST", "/requests", body)).status, JSON.stringify(body).slice(0, 100)).toBe(status);
    expect((await o.reply("GET", "/requests/evt_nope")).status).toBe(422);
    expect((await o.reply("GET", `/requests/evt_${"0".repeat(32)}`)).status).toBe(404);
    expect(
      (
        await call("POST", "/v1/deliveries", {
          body: { retry_delays: [0] },
          headers: { authorization: `Bearer ${o.token}` },
        })
      ).status,
    ).toBe(422);
    expect((await balanceOf(o.token)).balance_usd).toBe(before);
    expect(await r2Keys(o.id)).toEqual([]);
    expect(
      (await json(await call("GET", `/v1/deliveries/${o.id}/deliveries`, { headers: managed(o.mgmt) }))).items,
    ).toEqual([]);
  });
});
