/**
 * queues, per docs/kinds.md: push (delay, dedup id, priority); lease N with visibility;
 * ack, nack with delay, extend; dead letters after max_receive_count, listed and
 * redriven; long-poll leases; stats. Time is moved by editing the stored
 * visible_at inside the Durable Object, never by waiting minutes.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { queues } from "../../src/kinds/memory/queues";
import type { exportAll } from "../../src/kinds/memory/queues/messages";
import type { OpNames, OpOutput } from "../../src/kind/kind";
import {
  advance,
  balanceOf,
  buyCredits,
  call,
  createResource,
  json,
  managed,
  msOf,
  opsOn,
  stubOf,
  type Problem,
  type ResourceExport,
} from "../harness";
import { watchRowsRead } from "./rows-read";
import { MAX_WAITERS } from "../../durable-objects/resource/work";

/** What queues' op `N` answers. */
type Out<N extends OpNames<typeof queues>> = OpOutput<typeof queues, N>;
type Op = ReturnType<typeof opsOn<typeof queues>>["reply"];

async function queue(config: Record<string, unknown> = {}, usd = 1) {
  const { token } = await buyCredits(usd);
  const { id, mgmt } = await createResource("queues", token, { ttl_seconds: 86400, ...config });
  const { reply: op } = opsOn(queues, id, mgmt, token);
  return { token, id, mgmt, op };
}

/** A lease, read as granted: a test that expects a refusal reads it as `lease<Problem>`. */
const lease = <T = Out<"lease">>(op: Op, body: Record<string, unknown> = {}) => op<T>("POST", "/leases", body);
const ids = (items: { message_id: string }[]) => items.map((m) => m.message_id);

describe("queues", () => {
  it("1,000 messages, 50 parallel consumers: none held twice at once, none lost, each acked exactly once", async () => {
    const q = await queue({ visibility_seconds: 600 }, 3);
    const pushedIds: string[] = [];
    for (let b = 0; b < 10; b++) {
      const res = await q.op<Out<"push_batch">>("POST", "/messages/batch", {
        messages: Array.from({ length: 100 }, (_, i) => ({ body: { n: b * 100 + i } })),
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.queued).toBe(100);
      pushedIds.push(...ids(res.body.items));
    }
    expect(new Set(pushedIds).size).toBe(1000);

    const holder = new Map<string, number>();
    const leasedCount = new Map<string, number>();
    const ackedCount = new Map<string, number>();
    let overlaps = 0;
    const consumer = async (c: number) => {
      for (;;) {
        const got = await lease(q.op, { max_messages: 1 + (c % 7) });
        expect(got.status, JSON.stringify(got.body)).toBe(200);
        if (got.body.items.length === 0) return;
        for (const m of got.body.items) {
          if (holder.has(m.message_id)) overlaps += 1;
          holder.set(m.message_id, c);
          leasedCount.set(m.message_id, (leasedCount.get(m.message_id) ?? 0) + 1);
        }
        const done = (messageId: string) => {
          expect(holder.get(messageId)).toBe(c);
          holder.delete(messageId);
          ackedCount.set(messageId, (ackedCount.get(messageId) ?? 0) + 1);
        };
        if (c % 5 !== 0) {
          const res = await q.op<Out<"ack_batch">>("POST", "/leases/ack", {
            lease_ids: got.body.items.map((m: { lease_id: string }) => m.lease_id),
          });
          expect(res.status).toBe(200);
          expect(res.body.lost).toEqual([]);
          res.body.acked.forEach(done);
        } else {
          for (const m of got.body.items) {
            const res = await q.op("POST", `/leases/${m.lease_id}/ack`);
            expect(res.status, JSON.stringify(res.body)).toBe(200);
            expect(res.body).toEqual({ message_id: m.message_id, acked: true });
            done(m.message_id);
          }
        }
      }
    };
    await Promise.all(Array.from({ length: 50 }, (_, c) => consumer(c)));

    expect(overlaps).toBe(0);
    expect(holder.size).toBe(0);
    expect([...ackedCount.keys()].sort()).toEqual([...pushedIds].sort());
    expect([...ackedCount.values()].every((n) => n === 1)).toBe(true);
    expect([...leasedCount.values()].every((n) => n === 1)).toBe(true);
    const stats = await q.op("GET", "/stats");
    expect(stats.body).toMatchObject({
      visible: 0,
      in_flight: 0,
      delayed: 0,
      dead: 0,
      messages: 0,
      bytes: 0,
      oldest_age_seconds: null,
    });
  });

  it("an unacked lease reappears after its visibility timeout, and the stale lease can no longer ack", async () => {
    const q = await queue({ visibility_seconds: 60 });
    const pushed = await q.op("POST", "/messages", { body: { job: "slow" } });
    expect(pushed.body).toMatchObject({ duplicate: false, state: "visible" });
    const first = (await lease(q.op)).body.items[0]!;
    expect(first).toMatchObject({ message_id: pushed.body.message_id, receive_count: 1, body: { job: "slow" } });
    expect(Date.parse(first.lease_expires_at) - Date.now()).toBeGreaterThan(55_000);
    expect((await lease(q.op)).body.items).toEqual([]);
    expect((await q.op("GET", "/stats")).body).toMatchObject({ visible: 0, in_flight: 1 });

    await advance(q.id, 61_000);
    expect((await q.op("GET", `/messages/${first.message_id}`)).body.state).toBe("visible");
    const second = (await lease(q.op)).body.items[0]!;
    expect(second).toMatchObject({ message_id: first.message_id, receive_count: 2 });
    expect(second.lease_id).not.toBe(first.lease_id);

    const stale = await q.op("POST", `/leases/${first.lease_id}/ack`);
    expect(stale.status).toBe(409);
    expect(stale.body.code).toBe("conflict");
    expect((await q.op("POST", `/leases/${first.lease_id}/extend`, { visibility_seconds: 60 })).status).toBe(409);
    expect((await q.op("POST", "/leases/ack", { lease_ids: [first.lease_id] })).body).toEqual({
      acked: [],
      lost: [first.lease_id],
    });
    expect((await q.op("POST", `/leases/${second.lease_id}/ack`)).status).toBe(200);
    expect((await q.op("POST", `/leases/${second.lease_id}/ack`)).status).toBe(409);
  });

  it("a lease of 1 s lapses in real time, and a waiting long-poll is woken by the timer when it does", async () => {
    const q = await queue();
    await q.op("POST", "/messages", { body: "short" });
    const first = (await lease(q.op, { visibility_seconds: 1 })).body.items[0]!;
    const started = Date.now();
    const again = await lease(q.op, { wait_seconds: 10 });
    expect(again.body.items[0]).toMatchObject({ message_id: first.message_id, receive_count: 2 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
    expect(Date.now() - started).toBeLessThan(8_000);
  });

  it("extend keeps a lease; nack gives the message back, now or after a delay", async () => {
    const q = await queue({ visibility_seconds: 60 });
    await q.op("POST", "/messages", { body: 1 });
    const held = (await lease(q.op)).body.items[0]!;
    const ext = await q.op<Out<"extend">>("POST", `/leases/${held.lease_id}/extend`, { visibility_seconds: 600 });
    expect(ext.status).toBe(200);
    expect(Date.parse(ext.body.lease_expires_at) - Date.now()).toBeGreaterThan(590_000);
    await advance(q.id, 61_000);
    expect((await lease(q.op)).body.items).toEqual([]); // still held
    const back = await q.op("POST", `/leases/${held.lease_id}/nack`, { delay_seconds: 30 });
    expect(back.body).toMatchObject({ message_id: held.message_id, state: "delayed" });
    expect((await lease(q.op)).body.items).toEqual([]);
    expect((await q.op("GET", "/stats")).body).toMatchObject({ delayed: 1, in_flight: 0 });
    await advance(q.id, 31_000);
    const again = (await lease(q.op)).body.items[0]!;
    expect(again.receive_count).toBe(2);
    expect((await q.op("POST", `/leases/${again.lease_id}/nack`)).body).toMatchObject({ state: "visible" });
    expect((await lease(q.op)).body.items[0]!.receive_count).toBe(3);
  });

  it("a poison message becomes a dead letter after max_receive_count; redrive brings it back", async () => {
    const q = await queue({ max_receive_count: 2, visibility_seconds: 30 });
    const { message_id } = (await q.op("POST", "/messages", { body: { poison: true } })).body;
    const l1 = (await lease(q.op)).body.items[0]!;
    expect((await q.op("POST", `/leases/${l1.lease_id}/nack`)).body.state).toBe("visible");
    const l2 = (await lease(q.op)).body.items[0]!;
    expect(l2.receive_count).toBe(2);
    expect((await q.op("POST", `/leases/${l2.lease_id}/nack`)).body).toMatchObject({ state: "dead", visible_at: null });
    expect((await lease(q.op)).body.items).toEqual([]);

    const dead = await q.op<Out<"dead_letters">>("GET", "/dead");
    expect(dead.body.items).toHaveLength(1);
    expect(dead.body.items[0]).toMatchObject({ message_id, state: "dead", receive_count: 2, body: { poison: true } });
    expect(dead.body.items[0]!.dead_at).toBeTruthy();
    expect((await q.op("GET", "/stats")).body).toMatchObject({ dead: 1, visible: 0, messages: 1 });

    const unknown = `msg_${"0".repeat(32)}`;
    const redriven = await q.op("POST", "/dead/redrive", { message_ids: [message_id, unknown] });
    expect(redriven.body).toEqual({ redriven: [message_id], skipped: [unknown], remaining: 0 });
    const l3 = (await lease(q.op)).body.items[0];
    expect(l3).toMatchObject({ message_id, receive_count: 1 });

    // Lapsing leases count as receives too: the second lapse makes it dead again, found by the next call.
    await advance(q.id, 31_000);
    const l4 = (await lease(q.op)).body.items[0]!;
    expect(l4.receive_count).toBe(2);
    await advance(q.id, 31_000);
    expect((await q.op("GET", "/stats")).body).toMatchObject({ dead: 1, in_flight: 0 });
    expect((await q.op("POST", `/leases/${l4.lease_id}/ack`)).status).toBe(409);

    expect((await q.op("POST", "/dead/redrive", { all: true })).body).toMatchObject({
      redriven: [message_id],
      remaining: 0,
    });
    expect((await q.op("GET", `/messages/${message_id}`)).body).toMatchObject({ state: "visible", receive_count: 0 });
    expect((await q.op("POST", "/dead/redrive", {})).status).toBe(422);
    expect((await q.op("DELETE", `/messages/${message_id}`)).body).toEqual({ message_id, deleted: true });
    expect((await q.op("GET", `/messages/${message_id}`)).status).toBe(404);
    expect((await q.op("GET", "/stats")).body.messages).toBe(0);
  });

  it("deduplicates pushes by dedup_id within the window", async () => {
    const q = await queue();
    const a = await q.op("POST", "/messages", { body: "first", dedup_id: "order-1" });
    const b = await q.op("POST", "/messages", { body: "again", dedup_id: "order-1" });
    expect(b.body).toMatchObject({ message_id: a.body.message_id, duplicate: true, state: "visible" });
    const batch = await q.op<Out<"push_batch">>("POST", "/messages/batch", {
      messages: [
        { body: 1, dedup_id: "x" },
        { body: 2, dedup_id: "x" },
        { body: 3, dedup_id: "order-1" },
      ],
    });
    expect(batch.body.queued).toBe(1);
    expect(batch.body.items[1]).toMatchObject({ duplicate: true, message_id: batch.body.items[0]!.message_id });
    expect((await q.op("GET", "/stats")).body.visible).toBe(2);

    // Acked, the id still deduplicates within the window (state null: the first message is gone); after it, it does
    // not.
    const got = (await lease(q.op, { max_messages: 2 })).body.items;
    await q.op("POST", "/leases/ack", { lease_ids: got.map((m: { lease_id: string }) => m.lease_id) });
    expect((await q.op("POST", "/messages", { body: "late", dedup_id: "order-1" })).body).toMatchObject({
      duplicate: true,
      state: null,
    });
    await advance(q.id, 301_000); // past the dedup window (300 s)
    const fresh = await q.op("POST", "/messages", { body: "late", dedup_id: "order-1" });
    expect(fresh.body.duplicate).toBe(false);
    expect(fresh.body.message_id).not.toBe(a.body.message_id);
  });

  it("leases higher priority first, then in push order", async () => {
    const q = await queue();
    for (const [body, priority] of [
      ["low", 0],
      ["high", 5],
      ["high-2", 5],
      ["mid", 1],
      ["low-2", 0],
    ] as const)
      await q.op("POST", "/messages", { body, priority });
    const got = (await lease(q.op, { max_messages: 3 })).body.items;
    expect(got.map((m) => m.body)).toEqual(["high", "high-2", "mid"]);
    expect((await lease(q.op, { max_messages: 5 })).body.items.map((m) => m.body)).toEqual(["low", "low-2"]);
  });

  it("delays messages (per push or the queue's default) until their time", async () => {
    const q = await queue({ delay_seconds: 120 });
    const late = await q.op<Out<"push">>("POST", "/messages", { body: "default delay" });
    expect(late.body.state).toBe("delayed");
    expect(msOf(late.body.visible_at) - Date.now()).toBeGreaterThan(110_000);
    const now = await q.op("POST", "/messages", { body: "now", delay_seconds: 0 });
    expect(now.body.state).toBe("visible");
    await q.op("POST", "/messages", { body: "soon", delay_seconds: 30, priority: 9 });
    // Held long enough that its lease outlasts the time the delayed ones take.
    expect((await lease(q.op, { max_messages: 10, visibility_seconds: 600 })).body.items.map((m) => m.body)).toEqual([
      "now",
    ]);
    const stats = (await q.op<Out<"stats">>("GET", "/stats")).body;
    expect(stats).toMatchObject({ delayed: 2, in_flight: 1, visible: 0 });
    expect(msOf(stats.next_visible_at) - Date.now()).toBeGreaterThan(20_000);
    await advance(q.id, 31_000);
    expect((await lease(q.op, { max_messages: 10, visibility_seconds: 600 })).body.items.map((m) => m.body)).toEqual([
      "soon",
    ]);
    await advance(q.id, 120_000);
    expect((await lease(q.op, { max_messages: 10 })).body.items.map((m) => m.body)).toEqual(["default delay"]);
  });

  it("a lease long-poll wakes when a message is pushed", async () => {
    const q = await queue();
    const started = Date.now();
    const waiting = lease(q.op, { wait_seconds: 20 });
    await new Promise((r) => setTimeout(r, 300));
    await q.op("POST", "/messages", { body: { wake: true } });
    const got = await waiting;
    expect(got.status).toBe(200);
    expect(got.body.items[0]!.body).toEqual({ wake: true });
    expect(Date.now() - started).toBeLessThan(10_000);

    const idle = Date.now();
    expect((await lease(q.op, { wait_seconds: 1 })).body.items).toEqual([]);
    expect(Date.now() - idle).toBeGreaterThanOrEqual(900);
  });

  it("at most 1,000 long-polls wait on a queue: one more answers at once; a push still wakes the rest", async () => {
    const q = await queue({}, 2);
    const waiting = Array.from({ length: MAX_WAITERS }, () => lease(q.op, { max_messages: 1, wait_seconds: 30 }));
    // Until all of them wait in the object (each holds one of its timers).
    const waiters = () =>
      runInDurableObject(stubOf(q.id), (o) => (o as unknown as { work: { waiters: Set<unknown> } }).work.waiters.size);
    while ((await waiters()) < MAX_WAITERS) await new Promise((r) => setTimeout(r, 100));

    const started = Date.now();
    const extra = await lease(q.op, { max_messages: 1, wait_seconds: 30 });
    expect(extra.status).toBe(200);
    expect(extra.body.items).toEqual([]);
    expect(Date.now() - started).toBeLessThan(10_000);

    // 100 messages wake every waiter; each message is leased by exactly one (the others answer empty, as woken
    // long-polls may).
    expect(
      (await q.op("POST", "/messages/batch", { messages: Array.from({ length: 100 }, (_, n) => ({ body: { n } })) }))
        .status,
    ).toBe(200);
    const answers = await Promise.all(waiting);
    expect(answers.filter((r) => r.status !== 200)).toEqual([]);
    const leased = answers.flatMap((r) => ids(r.body.items));
    expect(new Set(leased).size).toBe(100);
    expect(leased).toHaveLength(100);
  }, 60_000);

  it("enforces its limits with 413 and 422, uncharged", async () => {
    const q = await queue();
    await q.op("POST", "/messages", { body: 0 });
    const spent = (await balanceOf(q.token)).spent_usd;
    const big = await q.op("POST", "/messages", { body: "x".repeat(64 * 1024) });
    expect(big.status).toBe(413);
    expect(big.body.code).toBe("payload_too_large");
    const inBatch = await q.op("POST", "/messages/batch", { messages: [{ body: 1 }, { body: "x".repeat(70_000) }] });
    expect(inBatch.status).toBe(413);
    expect(inBatch.body.detail).toContain("messages.1.body");
    expect(
      (await q.op<Problem>("POST", "/messages/batch", { messages: Array.from({ length: 101 }, () => ({ body: 1 })) }))
        .body.errors![0]!.path,
    ).toBe("messages");
    expect((await q.op<Problem>("POST", "/messages", { priority: 1 })).body.errors![0]!.path).toBe("body");
    expect((await q.op<Problem>("POST", "/messages", { body: 1, priority: 1001 })).body.errors![0]!.path).toBe(
      "priority",
    );
    expect((await lease<Problem>(q.op, { max_messages: 101 })).body.errors![0]!.path).toBe("max_messages");
    expect((await lease(q.op, { wait_seconds: 31 })).status).toBe(422);
    expect((await q.op("POST", "/leases/not-a-lease/ack")).status).toBe(422);
    expect((await balanceOf(q.token)).spent_usd).toBeCloseTo(spent, 6);
    expect((await q.op("GET", "/stats")).body.messages).toBe(1);

    // Kept as a rewrite of the counter: 99,999 real pushes (1,000 batch calls) would take minutes here.
    await runInDurableObject(
      stubOf(q.id),
      (_o, state) => void state.storage.sql.exec("UPDATE queue_state SET visible = visible + ?", 100_000 - 1),
    );
    const full = await q.op("POST", "/messages", { body: 1 });
    expect(full.status).toBe(413);
    expect(full.body.detail).toContain("100000 messages");
  });

  it("exports every message with its state", async () => {
    const q = await queue();
    await q.op("POST", "/messages/batch", {
      messages: [{ body: "a" }, { body: "b", delay_seconds: 60 }, { body: "c", priority: 3 }],
    });
    await lease(q.op);
    const res = await call("GET", `/v1/resources/${q.id}/export`, { headers: managed(q.mgmt) });
    const { data, resource } = await json<ResourceExport<ReturnType<typeof exportAll>>>(res);
    expect(data.messages.map((m) => [m.body, m.state])).toEqual([
      ["a", "visible"],
      ["b", "delayed"],
      ["c", "in_flight"],
    ]);
    expect(JSON.stringify(data)).not.toContain("lease_");
    expect(resource.usage).toMatchObject({ messages: 3, dead: 0 });
  });

  it(
    "stays on its indexes at 100,000 messages (the cap, less room for the calls): push, lease, ack, nack, " +
      "extend and stats read a handful of rows",
    async () => {
      const q = await queue({ visibility_seconds: 60 }, 2);
      const now = Date.now();
      // 100,000 messages in every state, written straight into storage (pushing them would take minutes here).
      await runInDurableObject(stubOf(q.id), (_o, state) => {
        const sql = state.storage.sql;
        sql.exec(
          `WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 99990)
         INSERT INTO queue_messages
           (message_id, body, bytes, priority, state, visible_at, lease_id, receive_count, enqueued_at, dead_at)
         SELECT printf('msg_%032x', x), '{"n":' || x || '}', 8, x % 10,
           CASE x % 4 WHEN 0 THEN 'delayed' WHEN 1 THEN 'in_flight' WHEN 2 THEN 'visible' ELSE 'dead' END,
           CASE x % 4 WHEN 0 THEN ?1 + 3600000 + x WHEN 1 THEN ?1 + 600000 + x WHEN 2 THEN ?1 - 1000 ELSE NULL END,
           CASE x % 4 WHEN 1 THEN printf('lease_%032x', x) ELSE NULL END,
           CASE x % 4 WHEN 1 THEN 1 WHEN 3 THEN 5 ELSE 0 END, ?1 - 100000 + x, CASE x % 4 WHEN 3 THEN ?1 ELSE NULL END
         FROM n`,
          now,
        );
        sql.exec(
          "UPDATE queue_state SET visible = 24998, delayed = 24997, in_flight = 24998, dead = 24997, bytes = 799920",
        );
      });
      const rows = await watchRowsRead(q.id);
      const budget = async <T>(what: string, limit: number, work: () => Promise<{ status: number; body: T }>) => {
        let out: { status: number; body: T } | undefined;
        const read = await rows.during(async () => (out = await work()));
        expect(out!.status, `${what}: ${JSON.stringify(out!.body)}`).toBe(200);
        expect(read, `${what} read ${read} rows`).toBeLessThan(limit);
        return out!.body;
      };

      await budget("push", 40, () => q.op("POST", "/messages", { body: "new", priority: 10, dedup_id: "d-1" }));
      const got = await budget("lease of 10", 80, () => lease(q.op, { max_messages: 10 }));
      expect(got.items).toHaveLength(10);
      expect(got.items[0]!.body).toBe("new");
      expect(got.items[1]!.priority).toBe(8);
      await budget("ack", 40, () => q.op("POST", `/leases/${got.items[0]!.lease_id}/ack`));
      await budget("batch ack", 80, () =>
        q.op("POST", "/leases/ack", { lease_ids: got.items.slice(1, 5).map((m: { lease_id: string }) => m.lease_id) }),
      );
      await budget("nack", 40, () => q.op("POST", `/leases/${got.items[5]!.lease_id}/nack`, { delay_seconds: 5 }));
      await budget("extend", 40, () =>
        q.op("POST", `/leases/${got.items[6]!.lease_id}/extend`, { visibility_seconds: 120 }),
      );
      const stats = await budget("stats", 40, () => q.op("GET", "/stats"));
      expect(stats).toMatchObject({ visible: 24998 - 9, in_flight: 24998 + 4, delayed: 24998, dead: 24997 });
      await budget("dead letters", 80, () => q.op("GET", "/dead?limit=20"));
      await budget("message", 40, () => q.op("GET", `/messages/${got.items[7]!.message_id}`));
    },
  );
});
