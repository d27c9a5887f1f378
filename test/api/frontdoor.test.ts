/**
 * frontdoor, per docs/kinds.md and issue 13: messages left at a public URL are pushed to the agent's
 * endpoint (signed, retried until a 2xx) or pulled and acked; the sender's receipt URL tells
 * pending, delivered or acknowledged; an ack stops a push still retrying; a push that gives up
 * leaves the message to be pulled. Tested against the local receiver.
 */
import { SELF, env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { frontdoor } from "../../src/kinds/address/frontdoor";
import { MAX_ITEMS } from "../../src/kinds/address/frontdoor/schema";
import {
  balanceOf,
  buyCredits,
  call,
  createResource,
  json,
  opsOn,
  problemOf,
  publicUrl,
  received,
  stubOf,
  verifierOf,
  type DeliveryPage,
} from "../harness";

const receiver = env.TEST_RECEIVER_URL;
const unique = () => crypto.randomUUID().slice(0, 8);

async function door(body: Record<string, unknown>) {
  const { token } = await buyCredits(1);
  const created = await createResource("frontdoor", token, body);
  return { ...created, token, url: publicUrl(created.record), ...opsOn(frontdoor, created.id, created.mgmt, token) };
}

type Receipt = { received: boolean; receipt_id: string; status_url: string; pushed: boolean };

async function leave(url: string, body: BodyInit, type = "application/json"): Promise<Receipt> {
  const res = await SELF.fetch(url, { method: "POST", body, headers: { "content-type": type } });
  expect(res.status).toBe(202);
  return (await res.json()) as Receipt;
}

/** The receipt, once `field` is `value` (pushes cross a real queue: poll, boundedly). */
async function receiptOnce(url: string, field: "status" | "push", value: string): Promise<Record<string, unknown>> {
  let last: Record<string, unknown> = {};
  for (let i = 0; i < 60; i++) {
    last = await json(await SELF.fetch(url));
    if (last[field] === value) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`receipt's ${field} never became ${value}: ${JSON.stringify(last)}`);
}

describe("frontdoor", () => {
  it("pushes each message to the endpoint, signed; the receipt says delivered, nothing is left to pull", async () => {
    const name = unique();
    const d = await door({ endpoint_url: `${receiver}/ok/${name}` });
    const sent = await leave(d.url, '{"from":"alice","text":"call me"}');
    expect(sent).toMatchObject({ received: true, pushed: true, receipt_id: expect.stringMatching(/^rcpt_/) });
    expect(sent.status_url).toBe(`${d.url}/receipts/${sent.receipt_id}`);
    const [hit] = await received(name, 1);
    const pushed = verifierOf(d.record).verify(hit!.body, hit!.headers) as Record<string, unknown>;
    expect(pushed).toMatchObject({
      type: "frontdoor.message",
      receipt_id: sent.receipt_id,
      seq: 1,
      method: "POST",
      content_type: "application/json",
      body_text: '{"from":"alice","text":"call me"}',
    });
    expect(await receiptOnce(sent.status_url, "status", "delivered")).toMatchObject({
      push: "delivered",
      settled_at: expect.any(String),
    });
    expect((await d.ok("pull", "/items")).items).toEqual([]);

    // A body past 32 KiB is pushed by a signed link; past 1 MiB it is refused, nothing kept.
    const big = new Uint8Array(100 * 1024).map((_, i) => i & 255);
    const second = await leave(d.url, big, "application/octet-stream");
    const hits = await received(name, 2);
    const link = verifierOf(d.record).verify(hits[1]!.body, hits[1]!.headers) as {
      body_url: string;
      body_text: null;
      size: number;
    };
    expect(link).toMatchObject({ body_text: null, size: big.length, receipt_id: second.receipt_id });
    expect(new Uint8Array(await (await SELF.fetch(link.body_url)).arrayBuffer())).toEqual(big);
    await problemOf(await SELF.fetch(d.url, { method: "POST", body: new Uint8Array(1024 * 1024 + 1) }), 413);
    expect(await d.ok("info", "")).toMatchObject({
      pending: 0,
      acked: 2,
      pushes: { delivered: 2, pushing: 0, failed: 0 },
    });
  });

  it("without an endpoint the agent pulls and acks; the receipt follows", async () => {
    const d = await door({});
    const first = await leave(d.url, "hello", "text/plain");
    const second = await leave(d.url, '{"n":2}');
    expect(first.pushed).toBe(false);
    expect(await json(await SELF.fetch(first.status_url))).toMatchObject({
      status: "pending",
      push: "none",
      settled_at: null,
    });
    const pulled = await d.ok("pull", "/items");
    expect(pulled.items.map((i) => i.body_text)).toEqual(["hello", '{"n":2}']);
    expect(await d.ok("ack", "/items/ack", { seqs: [1] })).toEqual({ acked: 1, pending: 1 });
    expect(await json(await SELF.fetch(first.status_url))).toMatchObject({
      status: "acknowledged",
      push: "none",
      settled_at: expect.any(String),
    });
    expect(await json(await SELF.fetch(second.status_url))).toMatchObject({ status: "pending" });
    await problemOf(await SELF.fetch(`${d.url}/receipts/rcpt_nope`), 404);
    await problemOf(await SELF.fetch(d.url, { method: "DELETE" }), 405);
    // A browser gets the form; its post answers with the receipt as a page.
    const form = await SELF.fetch(d.url, { headers: { accept: "text/html" } });
    expect(form.headers.get("content-type")).toContain("text/html");
    expect(await form.text()).toContain('<form method="post">');
    const posted = await SELF.fetch(d.url, {
      method: "POST",
      body: "message=hi",
      headers: { accept: "text/html", "content-type": "application/x-www-form-urlencoded" },
    });
    expect(posted.status).toBe(202);
    expect(await posted.text()).toMatch(/<code id="receipt">rcpt_\w+<\/code>/);
  });

  it("an ack stops a push still retrying; a push that gives up leaves the message to pull", async () => {
    const name = unique();
    const d = await door({ endpoint_url: `${receiver}/down/${name}`, retry_delays: [600] });
    const sent = await leave(d.url, '{"urgent":true}');
    await received(name, 1); // the first attempt failed; the next is ten minutes away
    expect(await json(await SELF.fetch(sent.status_url))).toMatchObject({ status: "pending", push: "pushing" });
    expect(await d.ok("ack", "/items/ack", { through: 1 })).toEqual({ acked: 1, pending: 0 });
    expect(await json(await SELF.fetch(sent.status_url))).toMatchObject({ status: "acknowledged", push: "cancelled" });
    const deliveries = await json<DeliveryPage>(
      await call("GET", `/v1/frontdoor/${d.id}/deliveries`, { headers: { authorization: `Bearer ${d.mgmt}` } }),
    );
    expect(deliveries.items[0]).toMatchObject({ status: "aborted" });

    // No retries at all: the push is dead at its first failure, and the message waits for a pull.
    await d.ok("set_endpoint", "/endpoint", { url: `${receiver}/down/${name}`, retry_delays: [] });
    const next = await leave(d.url, '{"second":true}');
    expect(await receiptOnce(next.status_url, "push", "failed")).toMatchObject({ status: "pending" });
    expect((await d.ok("pull", "/items")).items.map((i) => i.body_text)).toEqual(['{"second":true}']);

    // Pull only from now on.
    await d.ok("set_endpoint", "/endpoint", { url: null });
    expect((await leave(d.url, "x", "text/plain")).pushed).toBe(false);
    expect((await d.ok("info", "")).pushes).toEqual({ pushing: 0, delivered: 0, failed: 1 });
  });

  it("is full at its limit: 507, nothing kept and nothing pushed", async () => {
    const name = unique();
    const d = await door({ endpoint_url: `${receiver}/ok/${name}` });
    // Kept as a rewrite of the counter: 10,000 real captures through the public address would take minutes here.
    await runInDurableObject(
      stubOf(d.id),
      (_o, state) => void state.storage.sql.exec("UPDATE capture_stats SET items = ?", MAX_ITEMS),
    );
    expect((await problemOf(await SELF.fetch(d.url, { method: "POST", body: "one too many" }), 507)).code).toBe(
      "storage_full",
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(
      await json(
        await call("GET", `/v1/frontdoor/${d.id}/deliveries`, { headers: { authorization: `Bearer ${d.mgmt}` } }),
      ),
    ).toMatchObject({ items: [] });
  });

  it("refuses bad endpoints and schedules with 422, uncharged", async () => {
    const { token } = await buyCredits(1);
    const before = (await balanceOf(token)).balance_usd;
    for (const body of [
      { endpoint_url: "ftp://example.com/" },
      { retry_delays: [0] },
      { retry_delays: "soon" },
      { endpoint: "https://example.com/" },
    ]) {
      const res = await call("POST", "/v1/frontdoor", { body, headers: { authorization: `Bearer ${token}` } });
      expect(res.status, JSON.stringify(body)).toBe(422);
    }
    expect((await balanceOf(token)).balance_usd).toBe(before);
    const d = await door({});
    const after = (await balanceOf(d.token)).balance_usd;
    expect(await d.reply("PUT", "/endpoint", { url: "javascript:alert(1)" })).toMatchObject({ status: 422 });
    expect(await d.reply("PUT", "/endpoint", {})).toMatchObject({ status: 422 });
    expect((await balanceOf(d.token)).balance_usd).toBe(after);
  });
});
