/**
 * fanout, per docs/kinds.md and issue 13: one public URL, each request passed on to every destination
 * whose filter it passes (field equality, JSONata), each as its own signed, retried delivery to a
 * real local receiver; destinations added and removed live; per-destination statistics and sends.
 * Under load: 1,000 requests in parallel to 3 receivers, one failing half of what it gets, every
 * destination ends with every message delivered and the repeats it saw reported.
 */
import { SELF, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { fanout } from "../../src/kinds/address/fanout";
import { sha256Hex } from "../../src/bytes";
import {
  balanceOf,
  buyCredits,
  call,
  createResource,
  opsOn,
  publicUrl,
  r2Keys,
  received,
  stubOf,
  verifierOf,
  type Received,
} from "../harness";

const receiver = env.TEST_RECEIVER_URL;
const unique = () => crypto.randomUUID().slice(0, 8);

async function fanoutWith(destinations: Record<string, unknown>[]) {
  const { token } = await buyCredits(2);
  const created = await createResource("fanout", token, { destinations });
  return { ...created, token, url: publicUrl(created.record), ...opsOn(fanout, created.id, created.mgmt, token) };
}

async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean, tries = 300): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await read();
    if (ok(v)) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the state was never reached: ${JSON.stringify(await read()).slice(0, 500)}`);
}

const log = async (name: string) => (await (await fetch(`${receiver}/_log/${name}`)).json()) as Received[];

describe("fanout", () => {
  it("passes each request on to the destinations whose filter it passes, signed, with its headers", async () => {
    const [all, paid, big] = [unique(), unique(), unique()];
    const f = await fanoutWith([
      { url: `${receiver}/ok/${all}`, headers: { "x-route": "all" } },
      { url: `${receiver}/ok/${paid}`, filter: { equals: { type: "invoice.paid", "data.currency": "eur" } } },
      { url: `${receiver}/ok/${big}`, filter: { jsonata: "data.amount > 100 and $headers.`x-tenant` = 'acme'" } },
    ]);
    const post = (body: unknown) =>
      SELF.fetch(`${f.url}/stripe`, {
        method: "POST",
        body: JSON.stringify(body),
        headers: {
          "content-type": "application/json",
          "stripe-signature": "t=1,v1=abc",
          "x-tenant": "acme",
          "cf-connecting-ip": "203.0.113.7",
          cookie: "a=b",
        },
      });
    const first = await post({ type: "invoice.paid", data: { currency: "eur", amount: 500 } });
    expect(await first.json()).toEqual({ received: true, seq: 1, sent: 3 });
    expect(await (await post({ type: "invoice.created", data: { currency: "eur", amount: 50 } })).json()).toEqual({
      received: true,
      seq: 2,
      sent: 1,
    });

    const hits = await received(all, 2);
    const [hit] = await received(paid, 1);
    await received(big, 1);
    expect(JSON.parse(hit!.body)).toEqual({ type: "invoice.paid", data: { currency: "eur", amount: 500 } });
    expect(verifierOf(f.record).verify(hit!.body, hit!.headers)).toBeTruthy();
    expect(hit!.headers["stripe-signature"]).toBe("t=1,v1=abc");
    expect(hit!.headers["x-tenant"]).toBe("acme");
    expect(hit!.headers["cf-connecting-ip"]).toBeUndefined();
    expect(hit!.headers.cookie).toBeUndefined();
    expect(hits.map((h) => h.headers["x-route"])).toEqual(["all", "all"]);

    const list = await eventually(
      () => f.ok("list_destinations", "/destinations"),
      (l) => l.destinations.every((d) => d.stats.pending === 0),
    );
    expect(list.destinations.map((d) => [d.stats.matched, d.stats.filtered_out, d.stats.delivered])).toEqual([
      [2, 0, 2],
      [1, 1, 1],
      [1, 1, 1],
    ]);
    const sends = await f.ok("destination_sends", `/destinations/${list.destinations[1]!.destination_id}/sends`);
    expect(sends.items.map((s) => [s.message_seq, s.outcome, s.delivery?.status ?? null])).toEqual([
      [1, "sent", "delivered"],
      [2, "filtered_out", null],
    ]);
  });

  it("adds and removes destinations while live; a filter that fails is counted, and sends nothing", async () => {
    const [a, b] = [unique(), unique()];
    const f = await fanoutWith([{ url: `${receiver}/ok/${a}` }]);
    const added = await f.ok("add_destination", "/destinations", {
      url: `${receiver}/ok/${b}`,
      filter: { jsonata: "$number(n) > 1" },
    });
    expect(added.destination_id).toMatch(/^dst_/);
    await SELF.fetch(f.url, { method: "POST", body: JSON.stringify({ n: "2" }) });
    await SELF.fetch(f.url, { method: "POST", body: JSON.stringify({ n: "not a number" }) });
    await received(b, 1);
    const removed = await f.ok("remove_destination", `/destinations/${added.destination_id}`);
    expect(removed.removed_at).not.toBeNull();
    expect(await (await SELF.fetch(f.url, { method: "POST", body: JSON.stringify({ n: "5" }) })).json()).toMatchObject({
      seq: 3,
      sent: 1,
    });
    await received(a, 3);
    const stats = (await f.ok("list_destinations", "/destinations")).destinations.find(
      (d) => d.destination_id === added.destination_id,
    )!.stats;
    expect(stats).toMatchObject({ matched: 1, filter_errors: 1 });
    const sends = await f.ok("destination_sends", `/destinations/${added.destination_id}/sends`);
    expect(sends.items[1]).toMatchObject({ outcome: "filter_error", filter_error: expect.stringContaining("D3030") });
    expect(await log(b)).toHaveLength(1);
    expect(await f.reply("DELETE", `/destinations/${added.destination_id}`)).toMatchObject({ status: 404 });
  });

  it("a destination added while a message is prepared gets it: the message commits after the add", async () => {
    const [a, b] = [unique(), unique()];
    const f = await fanoutWith([{ url: `${receiver}/ok/${a}` }]);
    // The next request waits between its prepare step (which saw one destination) and its commit.
    await stubOf(f.id).injectFaults({ pauseAfterPrepareMs: 800 });
    const publishing = SELF.fetch(f.url, { method: "POST", body: JSON.stringify({ n: 1 }) });
    await new Promise((r) => setTimeout(r, 200));
    await f.ok("add_destination", "/destinations", { url: `${receiver}/ok/${b}` });
    expect(await (await publishing).json()).toMatchObject({ seq: 1, sent: 2 });
    await received(a, 1);
    await received(b, 1);
  });

  it("a binary body reaches every destination byte-exact, stored once and deleted once delivered", async () => {
    const [a, b] = [unique(), unique()];
    const f = await fanoutWith([{ url: `${receiver}/ok/${a}` }, { url: `${receiver}/ok/${b}` }]);
    const bytes = new Uint8Array(1024 * 1024).map((_, i) => (i * 7 + (i >> 8)) & 0xff);
    expect((await SELF.fetch(`${f.url}/upload`, { method: "PUT", body: bytes })).status).toBe(200);
    for (const name of [a, b]) {
      const [hit] = await received(name, 1);
      expect(sha256Hex(Uint8Array.from(atob(hit!.raw), (c) => c.charCodeAt(0)))).toBe(sha256Hex(bytes));
    }
    expect(
      await eventually(
        () => r2Keys(f.id),
        (keys) => keys.length === 0,
      ),
    ).toEqual([]);
  });

  it("refuses bad destinations and filters with 422 (409 past the limit), uncharged", async () => {
    const f = await fanoutWith([]);
    const before = (await balanceOf(f.token)).balance_usd;
    for (const destination of [
      { url: `${receiver}/ok/x`, filter: {} },
      { url: `${receiver}/ok/x`, filter: { jsonata: "foo.(bar" } },
      { url: `${receiver}/ok/x`, filter: { jsonata: "$match(a, /(a+)+$/)" } },
      { url: `${receiver}/ok/x`, filter: { jsonata: "x".repeat(5000) } },
      { url: "ftp://example.com/" },
      { url: `${receiver}/ok/x`, headers: { "x-a": "1\n2" } },
      { url: `${receiver}/ok/x`, retry_delays: [0] },
    ]) {
      const res = await f.reply("POST", "/destinations", destination);
      expect(res, JSON.stringify(destination).slice(0, 80)).toMatchObject({
        status: 422,
        body: { code: "validation_failed" },
      });
    }
    const bad = await call("POST", "/v1/fanout", {
      body: { destinations: [{ url: `${receiver}/ok/x`, filter: { jsonata: "(" } }] },
      headers: { authorization: `Bearer ${f.token}` },
    });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toContain("destinations.0.filter.jsonata");
    const many = Array.from({ length: 21 }, (_, i) => ({ url: `${receiver}/ok/${i}` }));
    expect(
      (
        await call("POST", "/v1/fanout", {
          body: { destinations: many },
          headers: { authorization: `Bearer ${f.token}` },
        })
      ).status,
    ).toBe(422);
    expect((await balanceOf(f.token)).balance_usd).toBe(before);
    const full = await fanoutWith(many.slice(0, 20));
    expect(await full.reply("POST", "/destinations", { url: `${receiver}/ok/21` })).toMatchObject({ status: 409 });
  });

  it(
    "1,000 requests in parallel to 3 destinations, one failing half of what it gets: " +
      "each ends with every message once, repeats reported",
    async () => {
      const [a, b, c] = [unique(), unique(), unique()];
      const f = await fanoutWith([
        { url: `${receiver}/ok/${a}` },
        { url: `${receiver}/ok/${b}` },
        { url: `${receiver}/flaky/${c}`, retry_delays: [1, 1, 1, 1, 1, 1, 1] },
      ]);
      const answers = await Promise.all(
        Array.from({ length: 1000 }, (_, n) =>
          SELF.fetch(f.url, { method: "POST", body: JSON.stringify({ n }) }).then(
            (r) => r.json() as Promise<{ seq: number; sent: number }>,
          ),
        ),
      );
      expect(new Set(answers.map((x) => x.seq)).size).toBe(1000);
      expect(answers.every((x) => x.sent === 3)).toBe(true);
      const list = await eventually(
        () => f.ok("list_destinations", "/destinations"),
        (l) => l.destinations.every((d) => d.stats.delivered === 1000),
        1200,
      );
      for (const [name, d] of [
        [a, list.destinations[0]!],
        [b, list.destinations[1]!],
        [c, list.destinations[2]!],
      ] as const) {
        const got = await log(name);
        const delivered = got.filter((h) => h.status === 200);
        const ids = new Set(delivered.map((h) => h.headers["webhook-id"]));
        // Every message arrived and was taken exactly once per destination; every extra request is a repeat the stats
        // report.
        expect(ids.size).toBe(1000);
        expect(delivered.length).toBe(1000);
        expect(new Set(delivered.map((h) => JSON.parse(h.body).n)).size).toBe(1000);
        expect(got.length - 1000).toBe(d.stats.attempts - d.stats.delivered);
        expect(d.stats).toMatchObject({ matched: 1000, delivered: 1000, pending: 0, dead: 0 });
      }
      expect(list.destinations[2]!.stats.redelivered).toBeGreaterThan(0);
      expect(list.destinations[0]!.stats.redelivered).toBe(0);
    },
    240_000,
  );
});
