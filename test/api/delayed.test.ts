/**
 * delayed, per docs/kinds.md: messages with delay_seconds or deliver_at (≤ TTL), dedup_id, list pending, cancel one.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { delayed } from "../../src/kinds/time/delayed";
import type { OpOutput } from "../../src/kind/kind";
import { advance, buyCredits, createResource, opsOn, received, verifierOf, type Problem } from "../harness";

const receiver = env.TEST_RECEIVER_URL;
const unique = () => crypto.randomUUID().slice(0, 8);

async function channel(name: string, extra: Record<string, unknown> = {}) {
  const { token } = await buyCredits(1);
  const created = await createResource("delayed", token, {
    url: `${receiver}/ok/${name}`,
    headers: { "X-Channel": "c1" },
    ...extra,
  });
  const { reply: op } = opsOn(delayed, created.id, created.mgmt, token);
  return { ...created, op, advance: (ms: number) => advance(created.id, ms) };
}

describe("delayed", () => {
  it("delivers each message at its time, in order, signed, with channel and message headers", async () => {
    const name = unique();
    const c = await channel(name);
    const late = await c.op("POST", "/messages", { body: { n: 2 }, delay_seconds: 7200 });
    const soon = await c.op("POST", "/messages", { body: "first", delay_seconds: 60, headers: { "X-Msg": "m1" } });
    expect(soon.body).toMatchObject({ status: "pending", message_id: expect.stringMatching(/^msg_/) });

    await c.advance(3600_000); // an hour: only the first is due
    const [first] = await received(name, 1);
    expect(first!.body).toBe("first");
    expect(first!.headers).toMatchObject({ "x-channel": "c1", "x-msg": "m1" });
    expect(first!.headers["content-type"]).toContain("text/plain");
    expect(first!.headers["webhook-signature"]).toMatch(/^v1,/);
    expect(
      (await c.op<OpOutput<typeof delayed, "messages">>("GET", "/messages?status=pending")).body.items.map(
        (m: { message_id: string }) => m.message_id,
      ),
    ).toEqual([late.body.message_id]);

    await c.advance(7200_000);
    const both = await received(name, 2);
    expect(verifierOf(c.record).verify(both[1]!.body, both[1]!.headers)).toEqual({ n: 2 });
    for (let i = 0; i < 50; i++) {
      const { items } = (await c.op<OpOutput<typeof delayed, "messages">>("GET", "/messages?status=delivered")).body;
      if (items.length === 2) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error("messages were not marked delivered");
  });

  it("deduplicates by dedup_id and cancels a pending message", async () => {
    const name = unique();
    const c = await channel(name);
    const a = await c.op("POST", "/messages", { body: { a: 1 }, delay_seconds: 600, dedup_id: "order-7" });
    const again = await c.op("POST", "/messages", { body: { a: 2 }, delay_seconds: 5, dedup_id: "order-7" });
    expect(again.body).toMatchObject({ message_id: a.body.message_id, deduplicated: true });
    const b = await c.op("POST", "/messages", { body: { b: 1 }, delay_seconds: 600 });
    const cancelled = await c.op("POST", "/messages/cancel", { message_id: b.body.message_id });
    expect(cancelled.body.status).toBe("cancelled");
    expect((await c.op("POST", "/messages/cancel", { message_id: b.body.message_id })).status).toBe(409);

    await c.advance(600_000);
    const hits = await received(name, 1);
    await new Promise((r) => setTimeout(r, 300));
    expect((await received(name, 1)).length).toBe(1);
    expect(JSON.parse(hits[0]!.body)).toEqual({ a: 1 });
  });

  it("refuses a message past the channel's lifetime, or with two times", async () => {
    const c = await channel(unique(), { ttl_seconds: 86400 });
    const late = await c.op<Problem>("POST", "/messages", { body: {}, delay_seconds: 2 * 86400 });
    expect(late.status).toBe(422);
    expect(late.body.errors![0]!.path).toBe("delay_seconds"); // the field that set the time
    const both = await c.op("POST", "/messages", { body: {}, delay_seconds: 5, deliver_at: new Date().toISOString() });
    expect(both.status).toBe(422);
    expect((await c.op("GET", "/messages")).body.items).toEqual([]);
  });
});
