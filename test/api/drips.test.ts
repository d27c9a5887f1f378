/**
 * drips, per docs/kinds.md: messages enqueued (one or a batch) are released to the target at `rate`
 * with at most max_parallel in flight; pause/resume; backlog listing. Time is driven by moving
 * the release window back and running the alarm; deliveries go to the real local receiver.
 */
import { env, runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ListToolsResult } from "@modelcontextprotocol/sdk/types.js";
import { drips } from "../../src/kinds/time/drips";
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
  received,
  stubOf,
  verifierOf,
  type OpenApiDocument,
  type PriceList,
  type Problem,
  type ResourceExport,
} from "../harness";

/** What drips' op `N` answers. */
type Out<N extends OpNames<typeof drips>> = OpOutput<typeof drips, N>;

const receiver = env.TEST_RECEIVER_URL;
const unique = () => crypto.randomUUID().slice(0, 8);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const logOf = async (name: string) =>
  (await (await fetch(`${receiver}/_log/${name}`)).json()) as { body: string; headers: Record<string, string> }[];

type Exported = {
  message_id: string;
  status: string;
  released_at: string | null;
  finished_at: string | null;
  body: string | null;
  headers: Record<string, string>;
};

async function drip(path: string, extra: Record<string, unknown> = {}) {
  const { token } = await buyCredits(1);
  const created = await createResource("drips", token, {
    url: `${receiver}/${path}`,
    headers: { "X-Drip": "d1" },
    rate: { count: 100, period_seconds: 60 },
    ...extra,
  });
  const { reply: op } = opsOn(drips, created.id, created.mgmt, token);
  const alarm = () => runDurableObjectAlarm(stubOf(created.id));
  const elapse = (ms: number) => advance(created.id, ms);
  const exported = async () =>
    (
      await json<ResourceExport<{ messages: Exported[] }>>(
        await call("GET", `/v1/resources/${created.id}/export`, { headers: managed(created.mgmt) }),
      )
    ).data.messages;
  /** Polls until `done` holds for the status (deliveries cross a real queue). */
  const until = async (done: (s: Out<"get">) => boolean, each?: (s: Out<"get">) => void, tries = 100) => {
    for (let i = 0; i < tries; i++) {
      const s = (await op<Out<"get">>("GET", "")).body;
      each?.(s);
      if (done(s)) return s;
      await sleep(200);
    }
    throw new Error("drip did not reach the expected state");
  };
  return { ...created, token, op, alarm, elapse, exported, until };
}

const batchOf = (n: number, from = 0) => ({
  messages: Array.from({ length: n }, (_, i) => ({ body: { n: from + i } })),
});

/** The most deliveries in flight at any one time, from the messages' release and finish times. */
function peakInFlight(messages: Exported[]): number {
  const edges = messages
    .filter((m) => m.released_at)
    .flatMap((m) => [
      { at: Date.parse(m.released_at!), d: 1 },
      { at: m.finished_at ? Date.parse(m.finished_at) : Infinity, d: -1 },
    ])
    // A finish and a release at the same instant: the slot is freed first.
    .sort((a, b) => a.at - b.at || a.d - b.d);
  let now = 0;
  let peak = 0;
  for (const e of edges) peak = Math.max(peak, (now += e.d));
  return peak;
}

describe("drips", () => {
  it("releases at the rate, oldest first, signed, with the drip's and the message's headers", async () => {
    const name = unique();
    const d = await drip(`ok/${name}`, { rate: { count: 2, period_seconds: 60 } });
    const first = await d.op("POST", "/messages", { body: { n: 0 }, headers: { "X-Msg": "m0" } });
    expect(first.body).toMatchObject({ status: "pending", message_id: expect.stringMatching(/^msg_/) });
    const batch = await d.op("POST", "/messages/batch", batchOf(4, 1));
    expect(batch.status).toBe(200);
    expect(batch.body.enqueued).toBe(4);

    await d.alarm();
    await received(name, 2);
    await sleep(300);
    const round1 = await logOf(name);
    expect(round1).toHaveLength(2);
    const status = (await d.op<Out<"get">>("GET", "")).body;
    expect(status).toMatchObject({ pending: 3, held_by: "rate", released_in_window: 2, paused: false });
    const wait = msOf(status.next_release_at) - Date.now();
    expect(wait).toBeGreaterThan(50_000);
    expect(wait).toBeLessThanOrEqual(60_000);

    await d.elapse(60_000);
    await received(name, 4);
    await sleep(300);
    expect(await logOf(name)).toHaveLength(4);

    // A faster pace takes effect at once: the last one need not wait for the window.
    const faster = await d.op("POST", "/limits", { rate: { count: 10, period_seconds: 60 } });
    expect(faster.body).toMatchObject({ rate: { count: 10, period_seconds: 60 } });
    await d.alarm();
    const all = await received(name, 5);

    const wh = verifierOf(d.record);
    const bodies = all.map((h) => wh.verify(h.body, h.headers as Record<string, string>));
    // Released two at a time, oldest first (the two of one release may arrive in either order).
    expect(bodies.slice(0, 2)).toEqual(expect.arrayContaining([{ n: 0 }, { n: 1 }]));
    expect(bodies.slice(2, 4)).toEqual(expect.arrayContaining([{ n: 2 }, { n: 3 }]));
    expect(bodies[4]).toEqual({ n: 4 });
    const zero = all.find((h) => h.headers["x-msg"])!;
    expect(JSON.parse(zero.body)).toEqual({ n: 0 });
    expect(zero.headers).toMatchObject({ "x-drip": "d1", "x-msg": "m0", "content-type": "application/json" });

    const done = await d.until((s) => s.pending === 0 && s.in_flight === 0);
    expect(done.held_by).toBeNull();
    const record = await json(await call("GET", `/v1/resources/${d.id}`, { headers: managed(d.mgmt) }));
    expect(record.usage).toMatchObject({ enqueued: 5, delivered: 5, pending: 0, in_flight: 0, failed: 0 });
    expect(record.status).toMatchObject({ pending: 0, next_release_at: null });
  });

  it("never has more than max_parallel deliveries in flight, and a finished one frees its slot", async () => {
    const name = unique();
    // The target always fails: each delivery stays in flight through its retries, then is dead.
    const d = await drip(`down/${name}`, { max_parallel: 2 });
    await d.op("POST", "/messages/batch", batchOf(4));
    for (let i = 0; i < 3; i++) await d.alarm();
    const s = (await d.op("GET", "")).body;
    expect(s).toMatchObject({ in_flight: 2, pending: 2, held_by: "max_parallel", next_release_at: null });
    await received(name, 2);
    expect(new Set((await logOf(name)).map((h) => h.headers["webhook-id"])).size).toBe(2);

    // Nothing is driven by hand from here: each dead delivery re-arms the alarm, which releases the next.
    const end = await d.until(
      (st) => st.pending === 0 && st.in_flight === 0,
      (st) => expect(st.in_flight).toBeLessThanOrEqual(2),
      300,
    );
    expect(end).toMatchObject({ pending: 0, in_flight: 0 });
    const messages = await d.exported();
    expect(messages.map((m) => m.status)).toEqual(["failed", "failed", "failed", "failed"]);
    expect(peakInFlight(messages)).toBe(2);
    expect(new Set((await logOf(name)).map((h) => h.headers["webhook-id"])).size).toBe(4);
  });

  it("with max_parallel 1, sends one at a time and moves on as each is delivered", async () => {
    const name = unique();
    const d = await drip(`ok/${name}`, { max_parallel: 1 });
    await d.op("POST", "/messages/batch", batchOf(3));
    const hits = await received(name, 3);
    expect(hits.map((h) => JSON.parse(h.body))).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }]);
    await d.until((s) => s.in_flight === 0 && s.pending === 0);
    const messages = await d.exported();
    expect(messages.every((m) => m.status === "delivered")).toBe(true);
    expect(peakInFlight(messages)).toBe(1);
  });

  it("pause stops releases, resume continues, release now goes past the pause", async () => {
    const name = unique();
    const d = await drip(`ok/${name}`, { paused: true });
    expect(d.record.status).toMatchObject({ paused: true });
    await d.op("POST", "/messages/batch", batchOf(3));
    await d.alarm();
    await sleep(300);
    expect(await logOf(name)).toEqual([]);
    expect((await d.op("GET", "")).body).toMatchObject({
      paused: true,
      pending: 3,
      held_by: "paused",
      next_release_at: null,
    });

    const resumed = await d.op("POST", "/resume");
    expect(resumed.body.paused).toBe(false);
    await d.alarm();
    await received(name, 3);
    await d.until((s) => s.in_flight === 0);

    expect((await d.op("POST", "/pause")).body.paused).toBe(true);
    const later = await d.op<Out<"enqueue_batch">>("POST", "/messages/batch", batchOf(3, 3));
    await d.alarm();
    await sleep(300);
    expect(await logOf(name)).toHaveLength(3);

    const byId = await d.op("POST", "/release", { message_id: later.body.items[2]!.message_id });
    expect(byId.body.released).toMatchObject([
      { message_id: later.body.items[2]!.message_id, status: "in_flight", delivery_id: expect.any(String) },
    ]);
    const hits = await received(name, 4);
    expect(JSON.parse(hits[3]!.body)).toEqual({ n: 5 });
    expect((await d.op("POST", "/release", { message_id: later.body.items[2]!.message_id })).status).toBe(409);
    expect((await d.op("POST", "/release", { count: 5 })).body.released).toHaveLength(2);
    await received(name, 6);
    expect((await d.op("POST", "/release")).body.released).toEqual([]);
  });

  it("lists the backlog by status with paging, gets, deduplicates, cancels and purges", async () => {
    const d = await drip(`ok/${unique()}`, { paused: true });
    const a = await d.op("POST", "/messages", { body: { a: 1 }, dedup_id: "order-7", headers: { "X-Msg": "a" } });
    const again = await d.op("POST", "/messages", { body: { a: 2 }, dedup_id: "order-7" });
    expect(again.body).toMatchObject({ message_id: a.body.message_id, deduplicated: true });
    const batch = await d.op<Out<"enqueue_batch">>("POST", "/messages/batch", {
      messages: [...batchOf(6).messages, { body: { a: 3 }, dedup_id: "order-7" }],
    });
    expect(batch.body.enqueued).toBe(6);
    expect(batch.body.items[6]).toMatchObject({ message_id: a.body.message_id, deduplicated: true });

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = (await d.op("GET", `/messages?limit=3${cursor ? `&cursor=${cursor}` : ""}`)).body as {
        items: { message_id: string }[];
        next_cursor: string | null;
      };
      expect(page.items.length).toBeLessThanOrEqual(3);
      seen.push(...page.items.map((m) => m.message_id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toEqual([
      a.body.message_id,
      ...batch.body.items.slice(0, 6).map((m: { message_id: string }) => m.message_id),
    ]);

    const one = await d.op("GET", `/message?message_id=${a.body.message_id}`);
    expect(one.body).toMatchObject({
      body: JSON.stringify({ a: 1 }),
      headers: { "x-drip": "d1", "x-msg": "a", "content-type": "application/json" },
      status: "pending",
    });
    expect(one.body.bytes).toBeGreaterThan(0);
    expect((await d.op("GET", `/message?message_id=msg_${"0".repeat(32)}`)).status).toBe(404);

    const cancelled = await d.op("POST", "/messages/cancel", { message_id: a.body.message_id });
    expect(cancelled.body).toMatchObject({ status: "cancelled", finished_at: expect.any(String) });
    expect((await d.op("POST", "/messages/cancel", { message_id: a.body.message_id })).status).toBe(409);
    // A cancelled message gives its dedup_id back.
    const anew = await d.op("POST", "/messages", { body: { a: 4 }, dedup_id: "order-7" });
    expect(anew.body.deduplicated).toBeUndefined();
    expect(anew.body.message_id).not.toBe(a.body.message_id);

    const released = await d.op("POST", "/release", { count: 2 });
    expect(released.body.released).toHaveLength(2);
    const inFlightOrDone = (await d.op<Out<"messages">>("GET", "/messages?status=cancelled")).body.items;
    expect(inFlightOrDone.map((m: { message_id: string }) => m.message_id)).toEqual([a.body.message_id]);
    expect((await d.op("GET", "/messages?status=pending")).body.items).toHaveLength(5);

    expect((await d.op("POST", "/messages/purge")).body).toEqual({ cancelled: 5 });
    expect((await d.op("GET", "/messages?status=pending")).body.items).toEqual([]);
    const s = await d.until((st) => st.in_flight === 0);
    expect(s).toMatchObject({ pending: 0, in_flight: 0 });
    const record = await json(await call("GET", `/v1/resources/${d.id}`, { headers: managed(d.mgmt) }));
    expect(record.usage).toMatchObject({ enqueued: 8, cancelled: 6, delivered: 2, pending: 0 });
  });

  it("exports every message with its body, headers and status", async () => {
    const name = unique();
    const d = await drip(`ok/${name}`, { paused: true });
    const batch = await d.op<Out<"enqueue_batch">>("POST", "/messages/batch", {
      messages: [{ body: "text" }, { body: { j: 1 }, headers: { "X-Msg": "j" } }, { body: [1, 2] }],
    });
    await d.op("POST", "/messages/cancel", { message_id: batch.body.items[2]!.message_id });
    await d.op("POST", "/release", { count: 1 });
    await received(name, 1);
    await d.until((s) => s.in_flight === 0);
    const res = await call("GET", `/v1/resources/${d.id}/export`, { headers: managed(d.mgmt) });
    const data = (await json<ResourceExport<{ status: Out<"get">; messages: Exported[] }>>(res)).data;
    expect(data.status).toMatchObject({ paused: true, pending: 1 });
    expect(data.messages).toMatchObject([
      {
        message_id: batch.body.items[0]!.message_id,
        status: "delivered",
        body: "text",
        headers: { "x-drip": "d1", "content-type": "text/plain; charset=utf-8" },
      },
      {
        message_id: batch.body.items[1]!.message_id,
        status: "pending",
        body: JSON.stringify({ j: 1 }),
        headers: { "x-msg": "j" },
      },
      { message_id: batch.body.items[2]!.message_id, status: "cancelled", body: "[1,2]" },
    ]);
  });

  it("refuses what exceeds its limits with 422 or 413 and charges nothing for it", async () => {
    const d = await drip(`ok/${unique()}`, { paused: true });
    const spent = async () => (await balanceOf(d.token)).spent_usd as number;
    const before = await spent();

    const tooMany = await d.op<Problem>("POST", "/messages/batch", batchOf(101));
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.errors![0]!.path).toBe("messages");
    const tooBig = await d.op<Problem>("POST", "/messages", { body: "x".repeat(64 * 1024 + 1) });
    expect(tooBig.status).toBe(422);
    expect(tooBig.body.errors![0]!.path).toBe("body");
    expect((await d.op("POST", "/messages/batch", { messages: [] })).status).toBe(422);
    expect((await d.op("POST", "/limits", {})).status).toBe(422);
    expect((await d.op("POST", "/limits", { max_parallel: 101 })).status).toBe(422);
    expect((await d.op("POST", "/release", { count: 1, message_id: `msg_${"0".repeat(32)}` })).status).toBe(422);
    expect(await spent()).toBe(before);

    // Unfinished messages may take 8 MiB: nine batches of 15 messages of 60,000 bytes fit, the tenth does not.
    const big = { messages: Array.from({ length: 15 }, () => ({ body: "y".repeat(60_000) })) };
    for (let i = 0; i < 9; i++) expect((await d.op("POST", "/messages/batch", big)).status).toBe(200);
    const paid = await spent();
    const full = await d.op("POST", "/messages/batch", big);
    expect(full.status).toBe(413);
    expect(full.body.code).toBe("payload_too_large");
    expect(await spent()).toBe(paid);
    expect((await d.op("GET", "")).body.pending).toBe(135); // all or none: nothing of the refused batch stayed

    const { token } = await buyCredits(1);
    const bad = await call("POST", "/v1/drips", {
      body: { url: `${receiver}/ok/x`, rate: { count: 10, period_seconds: 60 }, max_parallel: 0 },
      headers: { authorization: `Bearer ${token}` },
    });
    expect(bad.status).toBe(422);
    expect((await json<Problem>(bad)).errors!.map((e: { path: string }) => e.path)).toContain("max_parallel");
  });

  it("is in the OpenAPI document, with its webhook, and in the MCP tool list", async () => {
    const doc = await json<OpenApiDocument>(await call("GET", "/openapi.json"));
    expect(Object.keys(doc.paths!)).toEqual(
      expect.arrayContaining([
        "/v1/drips",
        "/v1/drips/{id}/messages",
        "/v1/drips/{id}/messages/batch",
        "/v1/drips/{id}/limits",
      ]),
    );
    expect(Object.keys(doc.webhooks ?? {}).join(" ")).toContain("drip.released");
    const tools = await json<{ result: ListToolsResult }>(
      await call("POST", "/mcp?toolsets=drips", { body: { jsonrpc: "2.0", id: 1, method: "tools/list" } }),
    );
    const names = tools.result.tools.map((t: { name: string }) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        "create_drips",
        "drips_enqueue",
        "drips_enqueue_batch",
        "drips_release",
        "drips_set_limits",
      ]),
    );
  });

  it("publishes its prices", async () => {
    const { operations } = await json<PriceList>(await call("GET", "/v1/prices"));
    const price = (op: string) => operations.find((o: { operation: string }) => o.operation === op)?.price_usd;
    expect(price("drips.create")).toBe(0.0005);
    expect(price("drips.enqueue")).toBe(0.0005);
    expect(price("drips.enqueue_batch")).toBe(0.02);
  });
});
