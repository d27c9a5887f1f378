/**
 * deadman, per docs/kinds.md: period + grace; public ping URL with /start, /fail, /{exit_code};
 * new → up → late → down → up; alert after N misses; recovery event; re-alert interval;
 * a sealed payload released once to a successor. Time is driven: the switch's times are
 * moved back and the alarm run, never waited for.
 */
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { deadman as deadmanKind } from "../../src/kinds/time/deadman";
import type { allPings } from "../../src/kinds/time/deadman/store/pings";
import type { EventEnvelope } from "../../src/delivery/events";
import type { OpNames, OpOutput } from "../../src/kind/kind";
import {
  advance,
  buyCredits,
  call,
  createResource,
  json,
  managed,
  msOf,
  received,
  stubOf,
  type DeliveryPage,
  type Problem,
  type Received,
  type ResourceExport,
  verifierOf,
} from "../harness";

/** What deadman's op `N` answers. */
type Out<N extends OpNames<typeof deadmanKind>> = OpOutput<typeof deadmanKind, N>;

const receiver = env.TEST_RECEIVER_URL;
const unique = () => crypto.randomUUID().slice(0, 8);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

async function deadman(name: string, extra: Record<string, unknown> = {}) {
  const { token } = await buyCredits(1);
  const created = await createResource("deadman", token, {
    period_seconds: 3600,
    grace_seconds: 600,
    alert_url: `${receiver}/ok/${name}`,
    ...extra,
  });
  const address = new URL(created.record.urls.public as string).pathname;
  const webhook = verifierOf(created.record);
  return {
    ...created,
    token,
    address,
    /** A ping at the public address: no credentials. */
    hit: async (suffix = "", method = "GET", body?: string) => {
      const res = await call(method, `${address}${suffix}`, {
        body,
        headers: body ? { "content-type": "text/plain" } : {},
      });
      return { status: res.status, text: await res.text() };
    },
    op: async <T = Record<string, unknown>>(method: string, path: string, body?: unknown) => {
      const res = await call(method, `/v1/deadman/${created.id}${path}`, {
        body,
        headers: managed(created.mgmt, token),
      });
      return { status: res.status, body: await json<T>(res) };
    },
    /** The record's status: the switch's, as `get` answers it. */
    status: async () =>
      (
        await json<{ status: Out<"get"> }>(
          await call("GET", `/v1/resources/${created.id}`, { headers: managed(created.mgmt) }),
        )
      ).status,
    /** `ms` pass on the resource's clock; the alarms due by then run. */
    advance: (ms: number) => advance(created.id, ms),
    /** The events the receiver got for `path`, checked against the resource's signing secret. */
    events: async (path: string, count: number) =>
      (await received(path, count)).map((r: Received) => webhook.verify(r.body, r.headers) as EventEnvelope),
  };
}

/** Lets queued deliveries arrive, then says how many the receiver got for `name`. */
async function settledCount(name: string): Promise<number> {
  // The queue hands deliveries over in batches of up to a second: wait that long before counting.
  await new Promise((r) => setTimeout(r, 1100));
  return ((await (await fetch(`${receiver}/_log/${name}`)).json()) as unknown[]).length;
}

async function dumpStorage(id: string, skip: string[] = []): Promise<string> {
  return runInDurableObject(stubOf(id), (_o, state) => {
    const sql = state.storage.sql;
    const tables = sql
      .exec<{ name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'",
      )
      .toArray();
    return tables
      .filter((t) => !skip.includes(t.name))
      .map((t) => `${t.name}:${JSON.stringify(sql.exec(`SELECT * FROM "${t.name}"`).toArray())}`)
      .join("\n");
  });
}

describe("deadman", () => {
  it("goes new → up → late → down (one alert) → re-alert → up with a recovery event", async () => {
    const name = unique();
    const d = await deadman(name, { notify_late: true, realert_seconds: 7200 });
    expect(d.record.urls.public).toMatch(/\/p\/deadman_[0-9A-Za-z]{43}$/);
    expect(d.record.status).toMatchObject({ state: "new", next_due_at: null, misses: 0 });
    expect(await runDurableObjectAlarm(stubOf(d.id))).toBe(true); // new: nothing is watched yet
    expect(await settledCount(name)).toBe(0);

    expect(await d.hit()).toEqual({ status: 200, text: "OK" });
    const up = await d.status();
    expect(up).toMatchObject({ state: "up", last_signal: "success", pings: 1, misses: 0 });
    expect(msOf(up.next_due_at) - msOf(up.last_ping_at)).toBe(HOUR);

    await d.advance(HOUR + 1000);
    expect(await d.status()).toMatchObject({ state: "late", misses: 0 });
    const late = (await d.events(name, 1))[0]!;
    expect(late).toMatchObject({ type: "deadman.late", resource_id: d.id, data: { state: "late" } });

    await d.advance(10 * MINUTE);
    const down = (await d.events(name, 2))[1]!;
    expect(down).toMatchObject({
      type: "deadman.down",
      id: expect.stringMatching(/^evt_/),
      data: { state: "down", misses: 1, alert_number: 1, repeat: false },
    });
    expect(await d.status()).toMatchObject({ state: "down", alerts_sent: 1, alert_at: null });
    await d.advance(HOUR); // within the re-alert interval: nothing more
    expect(await settledCount(name)).toBe(2);

    await d.advance(HOUR + 1000);
    const again = (await d.events(name, 3))[2]!;
    const stillDown = await d.status(); // (its down_since moved back with the clock)
    expect(again).toMatchObject({
      type: "deadman.down",
      data: { alert_number: 2, repeat: true, down_since: stillDown.down_since },
    });
    expect(stillDown.alerts_sent).toBe(2);

    expect((await d.hit("", "POST", "back")).status).toBe(200);
    const recovered = (await d.events(name, 4))[3]!;
    expect(recovered).toMatchObject({ type: "deadman.up", data: { state: "up", down_since: stillDown.down_since } });
    expect(recovered.data.downtime_seconds).toBeGreaterThanOrEqual(2 * 3600);
    expect(await d.status()).toMatchObject({ state: "up", misses: 0, down_since: null, alerts_sent: 0 });
    const log = await d.op<DeliveryPage>("GET", "/deliveries");
    expect(log.status).toBe(200);
    expect(log.body.items.map((i: { event_type: string }) => i.event_type)).toEqual([
      "deadman.late",
      "deadman.down",
      "deadman.down",
      "deadman.up",
    ]);
  });

  it("alerts only after alert_after_misses consecutive misses", async () => {
    const name = unique();
    const d = await deadman(name, { alert_after_misses: 3 });
    await d.hit();
    await d.advance(HOUR + 10 * MINUTE + 1000);
    expect(await d.status()).toMatchObject({ state: "late", misses: 1 });
    await d.advance(HOUR);
    expect(await d.status()).toMatchObject({ state: "late", misses: 2 });
    expect(await settledCount(name)).toBe(0);
    await d.advance(HOUR);
    const down = (await d.events(name, 1))[0]!;
    expect(down).toMatchObject({ type: "deadman.down", data: { misses: 3 } });
    await d.advance(HOUR); // no realert_seconds: one alert only
    expect(await settledCount(name)).toBe(1);
    expect((await d.status()).misses).toBe(4);
  });

  it("counts /fail and non-zero exit codes as failures, times runs from /start, and keeps a ping log", async () => {
    const name = unique();
    const d = await deadman(name, { alert_after_misses: 2 });
    expect((await d.hit("/start")).status).toBe(200);
    expect((await d.status()).state).toBe("new"); // a start alone does not begin watching
    await d.advance(90_000);
    expect((await d.hit("", "POST", "backup done")).status).toBe(200);
    const timed = await d.status();
    expect(timed).toMatchObject({ state: "up", running_since: null });
    expect(timed.last_duration_seconds).toBeGreaterThanOrEqual(90);
    expect(timed.last_duration_seconds).toBeLessThan(95); // 90 s moved, plus the test's own real time

    expect((await d.hit("/fail", "POST", "disk full")).status).toBe(200);
    expect(await d.status()).toMatchObject({ state: "late", misses: 1, last_signal: "fail" });
    expect(await settledCount(name)).toBe(0);
    expect((await d.hit("/3", "HEAD")).status).toBe(200);
    const down = (await d.events(name, 1))[0]!;
    expect(down).toMatchObject({ type: "deadman.down", data: { misses: 2, last_signal: "fail" } });

    expect((await d.hit("/256")).status).toBe(404);
    expect((await d.hit("/nope")).status).toBe(404);
    const put = await call("PUT", d.address);
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toBe("GET, HEAD, POST");
    expect((await d.hit("/log", "POST", "still here")).status).toBe(200);
    expect((await d.status()).state).toBe("down"); // a log line changes nothing

    expect((await d.hit("/0")).status).toBe(200);
    const up = (await d.events(name, 2))[1]!;
    expect(up.type).toBe("deadman.up");

    // The paid ping does the same with the management token.
    const viaApi = await d.op("POST", "/ping", { exit_code: 1, message: "x".repeat(3000) });
    expect(viaApi.status).toBe(200);
    expect(viaApi.body).toMatchObject({ state: "late", misses: 1 });

    const page = await d.op<Out<"pings">>("GET", "/pings?limit=4");
    expect(page.body.items.map((p: { signal: string; exit_code: number | null }) => [p.signal, p.exit_code])).toEqual([
      ["fail", 1],
      ["success", 0],
      ["log", null],
      ["fail", 3],
    ]);
    expect(page.body.items[0]).toMatchObject({ source: "api", body_bytes: 3000 });
    expect(page.body.items[0]!.body).toHaveLength(1024);
    const rest = await d.op<Out<"pings">>("GET", `/pings?cursor=${page.body.next_cursor}`);
    expect(rest.body.items.map((p: { signal: string }) => p.signal)).toEqual(["fail", "success", "start"]);
    expect(rest.body.items[1]).toMatchObject({
      body: "backup done",
      duration_seconds: timed.last_duration_seconds,
      source: "public",
      method: "POST",
    });
    expect(rest.body.next_cursor).toBeNull();

    const exported = await json<ResourceExport<{ status: Out<"get">; pings: ReturnType<typeof allPings> }>>(
      await call("GET", `/v1/resources/${d.id}/export`, { headers: managed(d.mgmt) }),
    );
    expect(exported.data.pings).toHaveLength(7);
    expect(exported.data.status.state).toBe("late");
  });

  it("keeps a payload sealed and releases it to the successor once, when the switch goes down", async () => {
    const name = unique();
    const successor = `${name}-successor`;
    const secret = `vault-combination-${crypto.randomUUID()}`;
    const d = await deadman(name, { successor_url: `${receiver}/ok/${successor}` });
    const set = await d.op("POST", "/payload", { payload: { secret, note: "for my successor" } });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ held: true, released_at: null });
    expect(await dumpStorage(d.id)).not.toContain(secret);
    expect(
      JSON.stringify(await json(await call("GET", `/v1/resources/${d.id}/export`, { headers: managed(d.mgmt) }))),
    ).not.toContain(secret);

    await d.hit();
    await d.advance(HOUR + 10 * MINUTE + 1000); // the miss trips it; the same alarm run releases the payload
    const released = (await d.events(successor, 1))[0]!;
    expect(released).toMatchObject({
      type: "deadman.payload",
      data: { payload: { secret, note: "for my successor" } },
    });
    expect((await d.events(name, 1))[0]!.type).toBe("deadman.down");
    await d.advance(HOUR);
    expect(await settledCount(successor)).toBe(1);
    expect((await d.status()).payload).toMatchObject({
      held: false,
      released_at: expect.any(String),
      release_delivery_id: expect.stringMatching(/^evt_/),
    });
    // The switch forgot it, and the delivery log keeps it sealed (for a manual retry) and never shows it.
    expect(await dumpStorage(d.id)).not.toContain(secret);
    const log = await json<DeliveryPage>(
      await call("GET", `/v1/deadman/${d.id}/deliveries`, { headers: managed(d.mgmt) }),
    );
    const payloadDelivery = log.items.find((i: { event_type: string }) => i.event_type === "deadman.payload");
    expect(payloadDelivery).toMatchObject({ body: null, body_withheld: true, status: "delivered" });

    // Armed again: a failure ping trips it synchronously, and the next alarm run releases the new payload.
    await d.hit();
    await d.op("POST", "/payload", { payload: "second" });
    await d.hit("/fail");
    await runDurableObjectAlarm(stubOf(d.id));
    const second = (await d.events(successor, 2))[1]!;
    expect(second.data.payload).toBe("second");
    await runDurableObjectAlarm(stubOf(d.id));
    expect(await settledCount(successor)).toBe(2);
  });

  it("refuses a payload without successor_url, or too large, and clears one unreleased", async () => {
    const bare = await deadman(unique());
    expect((await bare.op("POST", "/payload", { payload: "x" })).status).toBe(409);
    const d = await deadman(unique(), { successor_url: `${receiver}/ok/${unique()}` });
    const big = await d.op("POST", "/payload", { payload: "x".repeat(40_000) });
    expect(big.status).toBe(413);
    expect(big.body.code).toBe("payload_too_large");
    expect((await d.op("POST", "/payload", { payload: ["a"] })).body.held).toBe(true);
    expect((await d.op("DELETE", "/payload")).body).toMatchObject({ held: false, bytes: null });
    const spent = await json(
      await call("GET", "/v1/credits/balance", { headers: { authorization: `Bearer ${d.token}` } }),
    );
    // Create, one payload and one clear: the refused calls cost nothing.
    expect(spent.spent_usd).toBeCloseTo((30 * 2000 + 1000 + 100) / 1e6, 6);
  });

  it("pauses until the next ping", async () => {
    const name = unique();
    const d = await deadman(name);
    await d.hit();
    expect((await d.op("POST", "/pause")).body).toMatchObject({ state: "paused", next_due_at: null });
    await d.advance(5 * HOUR);
    expect(await settledCount(name)).toBe(0);
    await d.hit();
    expect((await d.status()).state).toBe("up");
  });

  it("answers 404 for unknown and disabled addresses, 410 once the resource is cancelled", async () => {
    expect((await call("GET", "/p/NoSuchAddress0000000000")).status).toBe(404);
    const d = await deadman(unique());
    const publicId = d.address.split("/").pop()!;
    const admin = { authorization: "Bearer test-admin-token" };
    expect(
      (
        await call("POST", `/v1/admin/public-addresses/${publicId}/disable`, {
          body: { reason: "abuse report" },
          headers: admin,
        })
      ).status,
    ).toBe(200);
    const disabled = await call("GET", d.address);
    expect(disabled.status).toBe(404);
    expect(disabled.headers.get("content-type")).toContain("application/problem+json");
    await call("POST", `/v1/admin/public-addresses/${publicId}/enable`, { headers: admin });
    expect((await d.hit("/start")).status).toBe(200);

    expect((await call("DELETE", `/v1/resources/${d.id}`, { headers: managed(d.mgmt) })).status).toBe(200);
    const gone = await call("GET", d.address);
    expect(gone.status).toBe(410);
    expect((await json(gone)).code).toBe("resource_cancelled");
  });

  it("refuses bad configurations before charging", async () => {
    const { token } = await buyCredits(1);
    const auth = { authorization: `Bearer ${token}` };
    const url = `${receiver}/ok/x`;
    const cases: [Record<string, unknown>, string][] = [
      [{ alert_url: url }, "period_seconds"],
      [{ period_seconds: 59, alert_url: url }, "period_seconds"],
      [{ period_seconds: 3600, alert_notify: "zvm_not-a-token" }, "alert_notify"],
      [{ period_seconds: 3600, alert_url: url, alert_after_misses: 0 }, "alert_after_misses"],
      [{ period_seconds: 3600, alert_url: url, realert_seconds: 5 }, "realert_seconds"],
      [{ period_seconds: 3600, alert_url: url, successor_url: "ftp://x" }, "successor_url"],
    ];
    for (const [body, path] of cases) {
      const res = await call("POST", "/v1/deadman", { body, headers: auth });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect((await json<Problem>(res)).errors!.map((e: { path: string }) => e.path)).toContain(path);
    }
    expect((await json(await call("GET", "/v1/credits/balance", { headers: auth }))).spent_usd).toBe(0);
  });
});
