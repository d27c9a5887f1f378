/**
 * wakeups, per docs/kinds.md: `at` or `delay_seconds`; method, headers, JSON or text
 * body; scheduled → delivered / failed; fire now; reschedule; attempt log.
 * Time is driven: the fire time is moved and the alarm run, never waited for.
 */
import { env, runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { wakeups } from "../../src/kinds/time/wakeups";
import type { OpOutput } from "../../src/kind/kind";
import {
  advance,
  advanceTo,
  buyCredits,
  call,
  createResource,
  json,
  managed,
  received,
  stubOf,
  verifierOf,
  type DeliveryPage,
  type Problem,
} from "../harness";

/** A wakeup's state: what its ops answer, and its record's status. */
type WakeupStatus = OpOutput<typeof wakeups, "get">;

const receiver = env.TEST_RECEIVER_URL;
const unique = () => crypto.randomUUID().slice(0, 8);

async function wakeup(body: Record<string, unknown>) {
  const { token } = await buyCredits(1);
  const created = await createResource("wakeups", token, body);
  const get = async () =>
    json(await call("GET", `/v1/wakeups/${created.id}`, { headers: managed(created.mgmt, token) }));
  const until = async (status: string) => {
    for (let i = 0; i < 100; i++) {
      const s = await get();
      if (s.status === status) return s;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`wakeup never reached ${status}`);
  };
  return { ...created, token, get, until };
}

/** Lets the resource's clock reach the wakeup's time; its alarm runs. */
async function makeDue(id: string, mgmt: string) {
  const record = await json<{ status: WakeupStatus }>(
    await call("GET", `/v1/resources/${id}`, { headers: managed(mgmt) }),
  );
  await advanceTo(id, record.status.fire_at);
}

describe("wakeups", () => {
  it("fires the configured call at its time, signed, and ends delivered", async () => {
    const name = unique();
    const w = await wakeup({
      url: `${receiver}/ok/${name}?x=1`,
      method: "PUT",
      headers: { "X-Agent": "a1" },
      body: { job: 42 },
      delay_seconds: 3600,
    });
    expect(w.record.status).toMatchObject({ status: "scheduled", method: "PUT" });
    expect(Date.parse(String(w.record.status?.fire_at)) - Date.parse(w.record.created_at)).toBe(3600_000);

    expect(await runDurableObjectAlarm(stubOf(w.id))).toBe(true); // not due: nothing is sent
    await makeDue(w.id, w.mgmt);
    const [hit] = await received(name, 1);
    expect(hit!.path).toBe(`/ok/${name}?x=1`);
    expect(hit!.headers["x-agent"]).toBe("a1");
    expect(hit!.headers["content-type"]).toBe("application/json");
    expect(verifierOf(w.record).verify(hit!.body, hit!.headers)).toEqual({ job: 42 });

    const done = await w.until("delivered");
    expect(done.fired_at).not.toBeNull();
    const log = await json<DeliveryPage>(
      await call("GET", `/v1/wakeups/${w.id}/deliveries`, { headers: managed(w.mgmt) }),
    );
    expect(log.items[0]).toMatchObject({
      id: done.delivery_id,
      event_type: "wakeup.fired",
      method: "PUT",
      status: "delivered",
      attempts: 1,
    });
  });

  it("sends a text body as text/plain, and fires now on demand", async () => {
    const name = unique();
    const w = await wakeup({
      url: `${receiver}/ok/${name}`,
      body: "wake up",
      at: new Date(Date.now() + 86400_000).toISOString(),
    });
    const fired = await call("POST", `/v1/wakeups/${w.id}/fire`, { headers: managed(w.mgmt, w.token) });
    expect(fired.status).toBe(200);
    expect((await json(fired)).status).toBe("firing");
    const [hit] = await received(name, 1);
    expect(hit!.body).toBe("wake up");
    expect(hit!.headers["content-type"]).toContain("text/plain");
    await w.until("delivered");
    // Delivered: the alarm no longer fires it.
    await runDurableObjectAlarm(stubOf(w.id));
    expect((await received(name, 1)).length).toBe(1);
  });

  it("ends failed when the receiver keeps failing", async () => {
    const name = unique();
    const w = await wakeup({ url: `${receiver}/down/${name}`, delay_seconds: 60 });
    await makeDue(w.id, w.mgmt);
    await w.until("failed");
    expect((await received(name, 8)).length).toBe(8);
  });

  it("ends failed, charged once and without an error, when its request is too large to queue", async () => {
    // 32 headers of 4 KiB each pass validation but make a request larger than a queue message.
    const headers = Object.fromEntries([...Array(32)].map((_, i) => [`X-Big-${i}`, "h".repeat(4096)]));
    const w = await wakeup({ url: `${receiver}/ok/${unique()}`, headers, delay_seconds: 3600 });
    const fired = await call("POST", `/v1/wakeups/${w.id}/fire`, { headers: managed(w.mgmt, w.token) });
    expect(fired.status, await fired.clone().text()).toBe(200);
    await w.until("failed");
    const log = await json<DeliveryPage>(
      await call("GET", `/v1/wakeups/${w.id}/deliveries`, { headers: managed(w.mgmt) }),
    );
    expect(log.items[0]).toMatchObject({
      status: "dead",
      attempt_log: [{ error: expect.stringMatching(/^not queued: /) }],
    });
  });

  it("reschedules, including a finished wakeup, within its lifetime", async () => {
    const name = unique();
    const w = await wakeup({ url: `${receiver}/ok/${name}`, delay_seconds: 600, ttl_seconds: 86400 });
    const res = await call("POST", `/v1/wakeups/${w.id}/reschedule`, {
      body: { delay_seconds: 7200 },
      headers: managed(w.mgmt, w.token),
    });
    expect(res.status).toBe(200);
    const moved = await json<WakeupStatus>(res);
    expect(Date.parse(moved.fire_at)).toBeGreaterThan(Date.now() + 7000_000);
    // The old time passes without a call: the alarm follows the new one.
    await advance(w.id, 600_000);
    expect(await (await fetch(`${receiver}/_log/${name}`)).json()).toEqual([]);
    expect((await w.get()).status).toBe("scheduled");

    const late = await call("POST", `/v1/wakeups/${w.id}/reschedule`, {
      body: { delay_seconds: 2 * 86400 },
      headers: managed(w.mgmt, w.token),
    });
    expect(late.status).toBe(422);
    expect((await json<Problem>(late)).errors![0]!.path).toBe("delay_seconds"); // the field that set the time
  });

  it("refuses bad configurations before charging", async () => {
    const { token } = await buyCredits(1);
    const auth = { authorization: `Bearer ${token}` };
    const cases: [Record<string, unknown>, string][] = [
      [{ url: `${receiver}/ok/x` }, "at"],
      [{ url: `${receiver}/ok/x`, at: new Date().toISOString(), delay_seconds: 5 }, "at"],
      [{ url: "file:///etc/passwd", delay_seconds: 5 }, "url"],
      [{ url: `${receiver}/ok/x`, delay_seconds: 5, headers: { "webhook-signature": "v1,forged" } }, "headers"],
      [{ url: `${receiver}/ok/x`, delay_seconds: 5, body: "x".repeat(70_000) }, "body"],
      [{ url: `${receiver}/ok/x`, delay_seconds: 3 * 86400, ttl_seconds: 86400 }, "delay_seconds"],
      [{ url: `${receiver}/ok/x`, at: "2099-01-01T00:00:00Z", ttl_seconds: 86400 }, "at"],
    ];
    for (const [body, path] of cases) {
      const res = await call("POST", "/v1/wakeups", { body, headers: auth });
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      expect((await json<Problem>(res)).errors!.map((e: { path: string }) => e.path)).toContain(path);
    }
    expect((await json(await call("GET", "/v1/credits/balance", { headers: auth }))).spent_usd).toBe(0);
  });
});
