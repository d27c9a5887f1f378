/**
 * snapshots, per docs/kinds.md: URL + interval or cron; each fetch stored in R2 with
 * status, headers, sha256, size; `changed` against the previous good one; keep
 * last N; an event on change. The first snapshot (the baseline) is taken by the
 * resource's own alarm right after create; later ones are driven by moving the
 * clock back and running the alarm. The local receiver serves the content.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { snapshots } from "../../src/kinds/time/snapshots";
import {
  advance,
  advanceTo,
  buyCredits,
  call,
  createResource,
  json,
  managed,
  msOf,
  opsOn,
  ORIGIN,
  r2Keys,
  received,
  serveContent,
  stubOf,
  verifierOf,
  type OpenApiDocument,
  type Problem,
  type ResourceExport,
} from "../harness";
import { MAX_BODY_BYTES, type SnapshotView } from "../../src/kinds/time/snapshots/schema";
import type { EventEnvelope } from "../../src/delivery/events";
import { discardSnapshot, type Fetched } from "../../src/kinds/time/snapshots/fetch";

const receiver = env.TEST_RECEIVER_URL;
const unique = () => crypto.randomUUID().slice(0, 8);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function sha256Hex(data: string | Uint8Array): Promise<string> {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  return Array.from(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)), (b) =>
    b.toString(16).padStart(2, "0"),
  ).join("");
}

/** A signed link of ours, fetched through the worker. */
const download = (url: string | null) => {
  expect(url, "a content URL").toMatch(/^https:/);
  return call("GET", url!.slice(ORIGIN.length));
};

async function watcher(body: Record<string, unknown>, opts: { baseline?: boolean } = {}) {
  const { token } = await buyCredits(1);
  const created = await createResource("snapshots", token, { ttl_seconds: 86400, interval_seconds: 3600, ...body });
  const { ok: op } = opsOn(snapshots, created.id, created.mgmt, token);
  /** The resource's clock reaches the next scheduled fetch; the alarm runs it. */
  const tick = async () => {
    const next = (await op("get", "")).next_snapshot_at as string;
    expect(next).not.toBeNull();
    await advanceTo(created.id, next);
  };
  const items = async () => (await op("list", "/snapshots")).items;
  const w = { ...created, token, op, tick, items };
  if (opts.baseline !== false) {
    // The alarm set at create takes the baseline on its own: wait for it, so no tick races it.
    for (let i = 0; i < 100 && (await op("get", "")).fetches < 1; i++) await sleep(50);
    expect((await op("get", "")).fetches).toBe(1);
  }
  return w;
}

describe("snapshots", () => {
  it("takes the baseline at once: status, headers, sha256, size recorded; bytes in R2, at content_url", async () => {
    const name = unique();
    const url = await serveContent(name, "<h1>version one</h1>", { type: "text/html; charset=utf-8" });
    const w = await watcher({ url });
    const [first] = await w.items();
    const sha = await sha256Hex("<h1>version one</h1>");
    expect(first).toMatchObject({
      seq: 1,
      ok: true,
      status: 200,
      error: null,
      manual: false,
      changed: false,
      sha256: sha,
      size: 20,
      content_type: "text/html; charset=utf-8",
      final_url: url,
    });
    expect(first!.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(first!.headers["content-length"]).toBe("20");
    expect(await r2Keys(w.id)).toEqual([expect.stringMatching(new RegExp(`^${w.id}/snapshots/${sha}-`))]);

    const res = await download(first!.content_url);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await res.text()).toBe("<h1>version one</h1>");

    const read = await w.op("read", "/snapshot");
    expect(read).toMatchObject({ seq: 1, content: "<h1>version one</h1>" });
    expect((await w.op("read", "/snapshot?seq=1&include_content=false")).content).toBeNull();
    const status = await w.op("get", "");
    expect(status).toMatchObject({
      url,
      interval_seconds: 3600,
      paused: false,
      stored: 1,
      fetches: 1,
      changes: 0,
      latest: { seq: 1 },
    });
    expect(msOf(status.next_snapshot_at) - Date.now()).toBeGreaterThan(3500_000);
  });

  it("unchanged content is no change, sends nothing; changed content is, with a signed snapshot.changed", async () => {
    const name = unique();
    const hook = unique();
    const url = await serveContent(name, "price: 10");
    const w = await watcher({ url, webhook_url: `${receiver}/ok/${hook}` });
    await w.tick();
    const [same] = await w.items();
    expect(same).toMatchObject({ seq: 2, ok: true, changed: false });
    expect(await r2Keys(w.id)).toHaveLength(1); // identical content: one object for both

    await serveContent(name, "price: 12");
    await w.tick();
    const [changed, , first] = await w.items();
    expect(changed).toMatchObject({ seq: 3, ok: true, changed: true, sha256: await sha256Hex("price: 12") });

    const events = await received(hook, 1);
    await sleep(300);
    expect(await (await fetch(`${receiver}/_log/${hook}`)).json()).toHaveLength(1); // none for the unchanged fetch
    const event = verifierOf(w.record).verify(events[0]!.body, events[0]!.headers) as EventEnvelope & {
      data: { snapshot: SnapshotView };
    };
    expect(event).toMatchObject({
      type: "snapshot.changed",
      resource_id: w.id,
      data: { url, snapshot: { seq: 3, changed: true }, previous: { seq: 2, sha256: first!.sha256 } },
    });
    expect(await (await download(event.data.snapshot.content_url)).text()).toBe("price: 12");
    expect(await w.op("get", "")).toMatchObject({ changes: 1, fetches: 3 });
    expect((await w.op("list", "/snapshots?changed_only=true")).items.map((s: { seq: number }) => s.seq)).toEqual([3]);
  });

  it("sends events to notify_url when no webhook_url is given", async () => {
    const name = unique();
    const hook = unique();
    const url = await serveContent(name, "a");
    const w = await watcher({ url, notify_url: `${receiver}/ok/${hook}` });
    await serveContent(name, "b");
    await w.tick();
    const [hit] = await received(hook, 1);
    expect(JSON.parse(hit!.body)).toMatchObject({ type: "snapshot.changed" });
  });

  it("ignore_whitespace: reformatting is not a change, new words are", async () => {
    const name = unique();
    const url = await serveContent(name, "hello   world\n");
    const w = await watcher({ url, ignore_whitespace: true });
    await serveContent(name, "  hello\n\tworld ");
    await w.tick();
    await serveContent(name, "hello there");
    await w.tick();
    expect((await w.items()).map((s) => s.changed)).toEqual([true, false, false]);
  });

  it("selector: only the text of the matching elements counts, and is shown", async () => {
    const name = unique();
    const page = (price: string, stamp: number) =>
      `<html><body><div id="price">$ <b>${price}</b></div><p>generated ${stamp}</p></body></html>`;
    const url = await serveContent(name, page("12", 1), { type: "text/html" });
    const w = await watcher({ url, selector: "#price" });
    await serveContent(name, page("12", 2), { type: "text/html" });
    await w.tick();
    await serveContent(name, page("15", 3), { type: "text/html" });
    await w.tick();
    const [moved, stamped, first] = await w.items();
    expect(first).toMatchObject({ selected_text: "$ 12", changed: false });
    expect(stamped).toMatchObject({ selected_text: "$ 12", changed: false });
    expect(stamped!.sha256).not.toBe(first!.sha256); // the page differs; the watched part does not
    expect(moved).toMatchObject({ selected_text: "$ 15", changed: true });
  });

  it("keeps the last N snapshots and deletes the R2 objects no kept snapshot holds", async () => {
    const name = unique();
    const url = await serveContent(name, "v1");
    const w = await watcher({ url, keep_last: 2 });
    for (const v of ["v2", "v3", "v4"]) {
      await serveContent(name, v);
      await w.tick();
    }
    const kept = await w.items();
    expect(kept.map((s) => s.seq)).toEqual([4, 3]);
    const keys = await r2Keys(w.id);
    expect(keys).toHaveLength(2);
    expect(keys.map((k) => k.split("/")[2]!.slice(0, 64)).sort()).toEqual(
      [await sha256Hex("v3"), await sha256Hex("v4")].sort(),
    );
    expect((await download(kept[1]!.content_url)).status).toBe(200);
    const pruned = await call("GET", `/v1/snapshots/${w.id}/snapshot?seq=1`, { headers: managed(w.mgmt, w.token) });
    expect(pruned.status).toBe(404);
    expect(await w.op("get", "")).toMatchObject({ stored: 2, fetches: 4 });
  });

  it(
    "records a failing target as failed, never as a change, with one snapshot.failed per outage; " +
      "the baseline survives pruning",
    async () => {
      const name = unique();
      const hook = unique();
      const url = await serveContent(name, "up");
      const w = await watcher({ url, keep_last: 1, webhook_url: `${receiver}/ok/${hook}` });
      await serveContent(name, "maintenance", { status: 503 });
      await w.tick();
      await w.tick();
      const [failed, baseline] = await w.items();
      expect(failed).toMatchObject({
        seq: 3,
        ok: false,
        status: 503,
        changed: false,
        error: expect.stringContaining("503"),
      });
      expect(baseline).toMatchObject({ seq: 1, ok: true }); // kept beyond keep_last: the baseline for `changed`
      expect(await w.op("get", "")).toMatchObject({ consecutive_failures: 2, changes: 0 });

      await serveContent(name, "up");
      await w.tick();
      const [back] = await w.items();
      expect(back).toMatchObject({ seq: 4, ok: true, changed: false }); // same as before the outage
      const events = await received(hook, 1);
      await sleep(300);
      expect(await (await fetch(`${receiver}/_log/${hook}`)).json()).toHaveLength(1);
      expect(JSON.parse(events[0]!.body)).toMatchObject({
        type: "snapshot.failed",
        data: { snapshot: { seq: 2, status: 503 }, consecutive_failures: 1 },
      });
    },
  );

  it("records a target that doesn't answer, and a body over the cap, with status null and nothing stored", async () => {
    const down = await watcher({ url: "http://127.0.0.1:9/nothing-listens-here" });
    const [none] = await down.items();
    expect(none).toMatchObject({ ok: false, status: null, sha256: null, content_url: null, changed: false });
    expect(none!.error).toMatch(/127\.0\.0\.1:9/);
    expect(await r2Keys(down.id)).toEqual([]);

    const big = await serveContent(unique(), new Uint8Array(MAX_BODY_BYTES + 1), { type: "application/octet-stream" });
    const large = await watcher({ url: big });
    const [capped] = await large.items();
    expect(capped).toMatchObject({ ok: false, status: null, content_url: null });
    expect(capped!.error).toContain(`larger than ${MAX_BODY_BYTES} bytes`);
    expect(await r2Keys(large.id)).toEqual([]);
  });

  it("follows redirects and records the final URL", async () => {
    const name = unique();
    await serveContent(name, "landed");
    const w = await watcher({ url: `${receiver}/redirect/${name}` });
    const [first] = await w.items();
    expect(first).toMatchObject({
      ok: true,
      status: 200,
      final_url: `${receiver}/content/${name}`,
      sha256: await sha256Hex("landed"),
    });
  });

  it("snapshot now is recorded as manual; pause stops the schedule, resume restarts it from now", async () => {
    const name = unique();
    const url = await serveContent(name, "one");
    const w = await watcher({ url, interval_seconds: 600 });
    const paused = await w.op("pause", "/pause");
    expect(paused).toMatchObject({ paused: true, next_snapshot_at: null });
    await advance(w.id, 3 * 600_000); // three intervals pass, paused: no fetch
    expect((await w.op("get", "")).fetches).toBe(1);

    await serveContent(name, "two");
    const taken = await w.op("take", "/snapshots");
    expect(taken).toMatchObject({ seq: 2, manual: true, ok: true, changed: true });
    const resumed = await w.op("resume", "/resume");
    expect(resumed.paused).toBe(false);
    // An interval from the resource's now (its clock is 30 minutes ahead after the paused half hour).
    expect(Math.abs(msOf(resumed.next_snapshot_at) - (Date.now() + 3 * 600_000 + 600_000))).toBeLessThan(10_000);
  });

  it("on a cron, fetches on the ticks of its time zone after the baseline", async () => {
    const url = await serveContent(unique(), "x");
    const w = await watcher({
      url,
      interval_seconds: undefined,
      cron: "30 9 * * *",
      timezone: "Asia/Tokyo",
      ttl_seconds: 3 * 86400,
    });
    const next = new Date(msOf((await w.op("get", "")).next_snapshot_at));
    const local = new Intl.DateTimeFormat("en-US", {
      timeZone: "Asia/Tokyo",
      hour: "numeric",
      minute: "numeric",
      hourCycle: "h23",
    }).format(next);
    expect(local).toBe("09:30");
    expect(next.getTime() - Date.now()).toBeLessThanOrEqual(86400_000);
  });

  it("pages newest first with a cursor", async () => {
    const name = unique();
    const url = await serveContent(name, "0");
    const w = await watcher({ url });
    for (const v of ["1", "2", "3"]) {
      await serveContent(name, v);
      await w.tick();
    }
    const first = await w.op("list", "/snapshots?limit=3");
    expect(first.items.map((s: { seq: number }) => s.seq)).toEqual([4, 3, 2]);
    const second = await w.op("list", `/snapshots?limit=3&cursor=${first.next_cursor}`);
    expect(second).toMatchObject({ items: [{ seq: 1 }], next_cursor: null });
  });

  it("exports every snapshot with a working download URL; after cancel nothing remains in R2", async () => {
    const name = unique();
    const url = await serveContent(name, "alpha");
    const w = await watcher({ url });
    await serveContent(name, "beta");
    await w.tick();
    const exported = await json<ResourceExport<{ snapshots: SnapshotView[] }>>(
      await call("GET", `/v1/resources/${w.id}/export`, { headers: managed(w.mgmt) }),
    );
    expect(exported.data.snapshots.map((s: { seq: number }) => s.seq)).toEqual([1, 2]);
    const link = exported.data.snapshots[1]!.content_url;
    expect(await (await download(link)).text()).toBe("beta");
    expect(await r2Keys(w.id)).toHaveLength(2);

    expect((await call("DELETE", `/v1/resources/${w.id}`, { headers: managed(w.mgmt) })).status).toBe(200);
    expect(await r2Keys(w.id)).toEqual([]);
    expect((await download(link)).status).toBe(404);
  });

  it("a fetch not recorded (paused/ended meanwhile) deletes its writes, never an object a snapshot holds", async () => {
    const url = await serveContent(unique(), "kept");
    const w = await watcher({ url });
    const [held] = await w.items();
    const heldKey = (await r2Keys(w.id))[0]!;
    const orphan = `${w.id}/snapshots/${"0".repeat(64)}-orphan`;
    await env.BUCKET.put(orphan, "fetched, never recorded");
    const fetched = (key: string, wrote: boolean): Fetched => ({
      fetchedAt: Date.now(),
      durationMs: 1,
      status: 200,
      error: null,
      finalUrl: url,
      headers: {},
      contentType: "text/plain",
      size: 4,
      sha256: held!.sha256,
      compareSha256: held!.sha256,
      selectedText: null,
      key,
      wrote,
    });
    // The step the alarm (or an operation) runs when its fetch no longer applies, with the object's own storage.
    await runInDurableObject(stubOf(w.id), async (_o, state) => {
      const ctx = {
        resourceId: w.id,
        env,
        sql: state.storage.sql,
        now: Date.now(),
        expiresAt: Date.now() + 3600_000,
        baseUrl: ORIGIN,
        stillHere: () => undefined,
      };
      await discardSnapshot(ctx, fetched(orphan, true)); // wrote its own object
      await discardSnapshot(ctx, fetched(heldKey, false)); // reused the kept snapshot's object
    });
    expect(await r2Keys(w.id)).toEqual([heldKey]);
  });

  it("refuses bad schedules, limits and URLs at create with 422, and charges nothing", async () => {
    const { token } = await buyCredits(1);
    const auth = { authorization: `Bearer ${token}` };
    const url = `${receiver}/ok/x`;
    const cases: [Record<string, unknown>, string][] = [
      [{ url, interval_seconds: 59 }, "interval_seconds"],
      [{ url }, "interval_seconds"],
      [{ url, interval_seconds: 60, cron: "* * * * *" }, "interval_seconds"],
      [{ url, cron: "0 0 9 * * *" }, "cron"],
      [{ url, cron: "* * * * *", timezone: "Mars/Olympus_Mons" }, "timezone"],
      [{ url, interval_seconds: 60, keep_last: 101 }, "keep_last"],
      [{ url, interval_seconds: 60, headers: { Host: "example.com" } }, "headers"],
      [{ url: "file:///etc/passwd", interval_seconds: 60 }, "url"],
      [{ url: "https://user:secret@example.com/", interval_seconds: 60 }, "url"],
      [{ url, interval_seconds: 60, webhook_url: "https://a:b@example.com/" }, "webhook_url"],
      [{ url, interval_seconds: 60, selector: ":hover" }, "selector"],
    ];
    for (const [body, path] of cases) {
      const res = await call("POST", "/v1/snapshots", { body, headers: auth });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect((await json<Problem>(res)).errors!.map((e: { path: string }) => e.path)).toContain(path);
    }
    expect((await json(await call("GET", "/v1/credits/balance", { headers: auth }))).spent_usd).toBe(0);
  });

  it("publishes its operations and its events in the OpenAPI document", async () => {
    const doc = await json<OpenApiDocument>(await call("GET", "/openapi.json"));
    expect(Object.keys(doc.paths!["/v1/snapshots/{id}/snapshots"]!).sort()).toEqual(["get", "post"]);
    expect(doc.paths!["/v1/snapshots/{id}/snapshot"]!.get).toBeDefined();
    expect(doc.webhooks).toHaveProperty(["snapshot.changed"]);
    expect(doc.webhooks).toHaveProperty(["snapshot.failed"]);
  });
});
