/**
 * debounce, per docs/kinds.md: events posted by the API or the public URL, optional key;
 * one firing after quiet_seconds without events, never later than max_wait_seconds;
 * the last event or all of them. Time is driven: the windows' times are moved back and
 * the alarm run, never waited for.
 */
import { env, runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { debounce } from "../../src/kinds/time/debounce";
import type { allFired } from "../../src/kinds/time/debounce/store/firing";
import type { EventEnvelope } from "../../src/delivery/events";
import type { Json } from "../../src/json";
import type { OpNames, OpOutput } from "../../src/kind/kind";
import {
  advance,
  buyCredits,
  call,
  createResource,
  json,
  managed,
  opsOn,
  received,
  stubOf,
  verifierOf,
  type Problem,
  type ResourceExport,
} from "../harness";

/** What debounce's op `N` answers. */
type Out<N extends OpNames<typeof debounce>> = OpOutput<typeof debounce, N>;

/** A debounce.fired request (src/kinds/time/debounce/store/firing.ts): `event` in mode last, `events` in mode all. */
interface Fired extends EventEnvelope {
  data: {
    key: string | null;
    mode: string;
    reason: string;
    received: number;
    dropped: number;
    event?: Json;
    events?: { received_at: string; source: string; event: Json }[];
  };
}

const receiver = env.TEST_RECEIVER_URL;
const unique = () => crypto.randomUUID().slice(0, 8);

async function debouncer(name: string, extra: Record<string, unknown> = {}) {
  const { token } = await buyCredits(1);
  const created = await createResource("debounce", token, {
    url: `${receiver}/ok/${name}`,
    quiet_seconds: 60,
    max_wait_seconds: 3600,
    ...extra,
  });
  const address = new URL(created.record.urls.public as string).pathname;
  const webhook = verifierOf(created.record);
  const { reply: op } = opsOn(debounce, created.id, created.mgmt, token);
  return {
    ...created,
    token,
    address,
    op,
    post: (event: unknown, key?: string) => op("POST", "/events", { event, ...(key ? { key } : {}) }),
    /** To the public address, without credentials. */
    publish: async (body: string, query = "", type = "application/json") => {
      const res = await call("POST", `${address}${query}`, { body, headers: { "content-type": type } });
      return { status: res.status, body: await json(res) };
    },
    /** `ms` pass on the resource's clock; the alarms due by then run. */
    advance: (ms: number) => advance(created.id, ms),
    firings: async (count: number) =>
      (await received(name, count)).map((r) => webhook.verify(r.body, r.headers) as Fired),
  };
}

async function settledCount(name: string): Promise<number> {
  // The queue hands deliveries over in batches of up to a second: wait that long before counting.
  await new Promise((r) => setTimeout(r, 1100));
  return ((await (await fetch(`${receiver}/_log/${name}`)).json()) as unknown[]).length;
}

describe("debounce", () => {
  it("fires a burst once, after the quiet period, with the last event (mode last)", async () => {
    const name = unique();
    const d = await debouncer(name);
    for (let n = 1; n <= 5; n++) expect((await d.post({ n })).status).toBe(200);
    const open = await d.op<Out<"windows">>("GET", "/windows");
    expect(open.body.items).toEqual([expect.objectContaining({ key: null, received: 5, kept: 1, dropped: 4 })]);
    const w = open.body.items[0]!;
    expect(Date.parse(w.fires_at) - Date.parse(w.last_event_at)).toBe(60_000);

    await d.advance(30_000);
    expect(await settledCount(name)).toBe(0);
    await d.advance(31_000);
    const fired = (await d.firings(1))[0]!;
    expect(fired).toMatchObject({
      type: "debounce.fired",
      resource_id: d.id,
      data: { key: null, mode: "last", reason: "quiet", received: 5, dropped: 4, event: { n: 5 } },
    });
    expect(fired.data.events).toBeUndefined();
    await runDurableObjectAlarm(stubOf(d.id));
    expect(await settledCount(name)).toBe(1);
    expect((await d.op("GET", "/windows")).body.items).toEqual([]);

    // The next event opens a new window.
    await d.post({ n: 6 });
    expect((await d.op("GET", "")).body).toMatchObject({
      open_windows: 1,
      events_received: 6,
      fired: 1,
      next_fire_at: expect.any(String),
    });
    for (let i = 0; i < 50; i++) {
      const history = await d.op<Out<"fired">>("GET", "/fired");
      if (history.body.items[0]?.outcome === "delivered") {
        expect(history.body.items[0]).toMatchObject({
          key: null,
          reason: "quiet",
          received: 5,
          sent: 1,
          delivery_id: expect.stringMatching(/^evt_/),
        });
        return;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error("the firing was not marked delivered");
  });

  it("delivers every event in mode all, from the API and the public address", async () => {
    const name = unique();
    const d = await debouncer(name, { mode: "all" });
    await d.post({ step: 1 });
    expect(await d.publish(JSON.stringify({ step: 2 }))).toMatchObject({
      status: 202,
      body: { key: null, window: { received: 2 } },
    });
    expect((await d.publish("plain text", "", "text/plain")).status).toBe(202);
    const res = await call("POST", d.address); // an empty body is a null event
    expect(res.status).toBe(202);
    const detail = await d.op<Out<"window">>("GET", "/window");
    expect(detail.body.events.map((e: { source: string; event: unknown }) => [e.source, e.event])).toEqual([
      ["api", { step: 1 }],
      ["public", { step: 2 }],
      ["public", "plain text"],
      ["public", null],
    ]);

    await d.advance(61_000);
    const fired = (await d.firings(1))[0]!;
    expect(fired.data).toMatchObject({ mode: "all", received: 4, dropped: 0 });
    expect(fired.data.events!.map((e: { event: unknown }) => e.event)).toEqual([
      { step: 1 },
      { step: 2 },
      "plain text",
      null,
    ]);
    expect(fired.data.event).toBeUndefined();
  });

  it("fires a steady stream at max_wait_seconds", async () => {
    const name = unique();
    const d = await debouncer(name, { quiet_seconds: 60, max_wait_seconds: 300 });
    for (let n = 0; n < 6; n++) {
      await d.post({ n });
      await d.advance(50_000);
      if (n < 5) expect(await settledCount(name)).toBe(0);
    }
    const fired = (await d.firings(1))[0]!;
    expect(fired.data).toMatchObject({ reason: "max_wait", received: 6, event: { n: 5 } });
  });

  it("keeps keys independent: by key, by ?key= and by key_path", async () => {
    const name = unique();
    const d = await debouncer(name, { key_path: "user.id", mode: "all" });
    await d.post({ user: { id: "alice" }, n: 1 }); // key from key_path
    await d.post({ n: 2 }, "bob"); // explicit key
    expect((await d.publish(JSON.stringify({ user: { id: 7 } }), "?key=alice")).body.key).toBe("alice"); // ?key= wins
    expect((await d.publish(JSON.stringify({ user: { id: 7 } }))).body.key).toBe("7");
    expect(
      (await d.op<Out<"windows">>("GET", "/windows")).body.items.map((w: { key: string | null; received: number }) => [
        w.key,
        w.received,
      ]),
    ).toEqual([
      ["alice", 2],
      ["bob", 1],
      ["7", 1],
    ]);

    await d.advance(40_000);
    await d.post({ n: 3 }, "bob"); // bob's quiet period starts again
    await d.advance(21_000);
    const first = await d.firings(2);
    expect(first.map((f) => f.data.key).sort()).toEqual(["7", "alice"]);
    expect(first.find((f) => f.data.key === "alice")!.data.events).toHaveLength(2);
    expect(await settledCount(name)).toBe(2);
    await d.advance(40_000);
    const all = await d.firings(3);
    expect(all[2]!.data).toMatchObject({ key: "bob", received: 2 });
  });

  it("flushes and cancels windows on demand", async () => {
    const name = unique();
    const d = await debouncer(name);
    await d.post({ a: 1 }, "a");
    await d.post({ b: 1 }, "b");
    await d.post({ c: 1 }, "c");
    const flushed = await d.op("POST", "/flush", { key: "a" });
    expect(flushed.body.fired).toEqual([expect.objectContaining({ key: "a", reason: "flush", sent: 1 })]);
    expect((await d.firings(1))[0]!.data).toMatchObject({ key: "a", reason: "flush", event: { a: 1 } });
    const cancelled = await d.op("POST", "/windows/cancel", { key: "b" });
    expect(cancelled.body.cancelled).toEqual([expect.objectContaining({ key: "b", received: 1 })]);
    expect((await d.op("POST", "/windows/cancel", { key: "b" })).status).toBe(404);
    expect((await d.op("POST", "/flush", {})).status).toBe(404); // no unkeyed window is open
    expect((await d.op("POST", "/flush", { key: "c", all: true })).status).toBe(422);
    expect(
      (await d.op<Out<"flush">>("POST", "/flush", { all: true })).body.fired.map((f: { key: string | null }) => f.key),
    ).toEqual(["c"]);
    await d.firings(2);
    await d.advance(120_000); // nothing is left to fire
    expect(await settledCount(name)).toBe(2);
    expect((await d.op("GET", "")).body).toMatchObject({ open_windows: 0, fired: 2, cancelled: 1, next_fire_at: null });
    const exported = await json<ResourceExport<{ fired: ReturnType<typeof allFired> }>>(
      await call("GET", `/v1/resources/${d.id}/export`, { headers: managed(d.mgmt) }),
    );
    expect(exported.data.fired.map((f: { key: string | null }) => f.key)).toEqual(["a", "c"]);
  });

  it("enforces its limits: event size, what a window keeps, the public address's methods and bodies", async () => {
    const name = unique();
    const d = await debouncer(name, { mode: "all" });
    const tooBig = await d.post("x".repeat(17_000));
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.code).toBe("payload_too_large");
    expect((await d.publish(JSON.stringify("x".repeat(17_000)))).status).toBe(413);
    expect((await d.publish("x".repeat(70_000), "", "text/plain")).status).toBe(413);
    expect((await d.publish("{not json")).status).toBe(400);
    expect((await call("GET", d.address)).status).toBe(405);
    expect((await call("POST", `${d.address}/elsewhere`, { body: "{}" })).status).toBe(404);
    expect((await d.post({}, "k".repeat(201))).status).toBe(422);
    expect((await d.op("GET", "")).body.events_received).toBe(0);

    // Bytes: three events of 15 KiB do not fit in 40 KiB; the oldest is dropped.
    for (const n of [1, 2, 3]) await d.post(`${n}${"y".repeat(15_000)}`, "big");
    expect((await d.op("GET", "/window?key=big")).body).toMatchObject({ received: 3, kept: 2, dropped: 1 });
    // Count: a window keeps its newest 100 events.
    for (let n = 1; n <= 103; n++) expect((await d.publish(String(n), "?key=many")).status).toBe(202);
    const many = await d.op<Out<"window">>("GET", "/window?key=many");
    expect(many.body).toMatchObject({ received: 103, kept: 100, dropped: 3 });
    expect(many.body.events[0]!.event).toBe(4);

    await d.advance(61_000);
    const fired = await d.firings(2);
    const big = fired.find((f) => f.data.key === "big")!;
    expect(big.data).toMatchObject({ received: 3, dropped: 1 });
    expect(big.data.events!.map((e) => (e.event as string)[0])).toEqual(["2", "3"]);
  });

  it("fires open windows just before the resource expires", async () => {
    const name = unique();
    // Its quiet time outlasts the resource: the window would otherwise never fire.
    const d = await debouncer(name, { quiet_seconds: 2 * 86400, max_wait_seconds: 2 * 86400, ttl_seconds: 86400 });
    await d.post({ last: true }, "k");
    // Five seconds of life left: the window fires now rather than vanish with the resource.
    await advance(d.id, 86400_000 - 5000);
    const fired = (await d.firings(1))[0]!;
    expect(fired.data).toMatchObject({ key: "k", reason: "expiring", event: { last: true } });
  });

  it("refuses bad configurations before charging", async () => {
    const { token } = await buyCredits(1);
    const auth = { authorization: `Bearer ${token}` };
    const url = `${receiver}/ok/x`;
    const cases: [Record<string, unknown>, string][] = [
      [{ url }, "quiet_seconds"],
      [{ url, quiet_seconds: 0 }, "quiet_seconds"],
      [{ url, quiet_seconds: 60, max_wait_seconds: 30 }, "max_wait_seconds"],
      [{ url, quiet_seconds: 60, max_wait_seconds: 8 * 86400 }, "max_wait_seconds"],
      [{ url, quiet_seconds: 60, mode: "first" }, "mode"],
      [{ url, quiet_seconds: 60, key_path: "a..b" }, "key_path"],
      [{ quiet_seconds: 60 }, "url"],
    ];
    for (const [body, path] of cases) {
      const res = await call("POST", "/v1/debounce", { body, headers: auth });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect((await json<Problem>(res)).errors!.map((e: { path: string }) => e.path)).toContain(path);
    }
    expect((await json(await call("GET", "/v1/credits/balance", { headers: auth }))).spent_usd).toBe(0);
  });
});
