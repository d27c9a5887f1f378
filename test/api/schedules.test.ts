/**
 * schedules, per docs/kinds.md: 5-field cron + IANA timezone; start/end; pause/resume;
 * run now; next?count=N preview; jitter; overlap skip/allow; history. Ticks are
 * driven by moving the next fire time and running the alarm.
 */
import { env, runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { schedules } from "../../src/kinds/time/schedules";
import {
  advanceTo,
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
  type Problem,
} from "../harness";

const receiver = env.TEST_RECEIVER_URL;
const unique = () => crypto.randomUUID().slice(0, 8);

async function schedule(body: Record<string, unknown>) {
  const { token } = await buyCredits(1);
  const created = await createResource("schedules", token, body);
  const { ok: op } = opsOn(schedules, created.id, created.mgmt, token);
  /** The resource's clock reaches the next tick; the alarm runs it. */
  const tick = async () => {
    const { next_run_at } = await op("get", "");
    await advanceTo(created.id, msOf(next_run_at));
  };
  return { ...created, token, op, tick };
}

const hourIn = (zone: string, iso: string) =>
  Number(new Intl.DateTimeFormat("en-US", { timeZone: zone, hour: "numeric", hourCycle: "h23" }).format(new Date(iso)));

describe("schedules", () => {
  it("previews fire times in its time zone, across DST", async () => {
    // Mondays at 9:00 in New York for 30 weeks: the UTC time moves when DST starts, the local one does not.
    const s = await schedule({
      cron: "0 9 * * 1",
      timezone: "America/New_York",
      url: `${receiver}/ok/${unique()}`,
      ttl_seconds: 240 * 86400,
    });
    const { times } = await s.op("next", "/next?count=30");
    expect(times).toHaveLength(30);
    for (const t of times) expect(hourIn("America/New_York", t.at)).toBe(9);
    expect(times[0]!.local).toContain("09:00:00 America/New_York");
    const utcHours = new Set(times.map((t: { at: string }) => new Date(t.at).getUTCHours()));
    expect(utcHours).toEqual(new Set([13, 14]));
  });

  it("calls on each tick, signed, advances, and records history", async () => {
    const name = unique();
    const s = await schedule({ cron: "*/10 * * * *", url: `${receiver}/ok/${name}`, body: { tick: true } });
    const before = await s.op("get", "");
    expect(before).toMatchObject({ paused: false, runs: 0 });
    expect(new Date(msOf(before.next_run_at)).getUTCMinutes() % 10).toBe(0);

    await s.tick();
    const [hit] = await received(name, 1);
    expect(verifierOf(s.record).verify(hit!.body, hit!.headers)).toEqual({ tick: true });
    const after = await s.op("get", "");
    expect(after.runs).toBe(1);
    expect(msOf(after.next_run_at)).toBeGreaterThan(Date.now());

    for (let i = 0; i < 50 && (await s.op("history", "/history")).items[0]!.outcome !== "delivered"; i++)
      await new Promise((r) => setTimeout(r, 100));
    expect((await s.op("history", "/history")).items[0]).toMatchObject({ outcome: "delivered", manual: false });
  });

  it("pause stops the calls, resume starts again from now, run now calls at once", async () => {
    const name = unique();
    // Once a year: no tick of its own can come during the test and be mistaken for one of these.
    const s = await schedule({ cron: "0 0 1 1 *", url: `${receiver}/ok/${name}`, ttl_seconds: 366 * 86400 });
    expect((await s.op("pause", "/pause")).paused).toBe(true);
    expect((await s.op("get", "")).next_run_at).toBeNull();
    await runDurableObjectAlarm(stubOf(s.id));
    const resumed = await s.op("resume", "/resume");
    expect(resumed.paused).toBe(false);
    expect(msOf(resumed.next_run_at)).toBeGreaterThan(Date.now());
    expect(await (await fetch(`${receiver}/_log/${name}`)).json()).toEqual([]);

    expect((await s.op("run", "/run")).runs).toBe(1);
    await received(name, 1);
    expect((await s.op("history", "/history")).items[0]!.manual).toBe(true);
  });

  it("skips a tick while the previous call is still in flight (overlap: skip)", async () => {
    const name = unique();
    const s = await schedule({ cron: "*/10 * * * *", url: `${receiver}/down/${name}`, overlap: "skip" });
    await s.tick();
    await s.tick(); // the first call is still being retried
    const { items } = await s.op("history", "/history");
    expect(items.map((r: { outcome: string }) => r.outcome)).toEqual(["skipped", "sent"]);
  });

  it("spreads calls by up to jitter_seconds after each tick", async () => {
    const s = await schedule({ cron: "*/10 * * * *", url: `${receiver}/ok/${unique()}`, jitter_seconds: 300 });
    const next = msOf((await s.op("get", "")).next_run_at);
    expect(next % 600_000).toBeLessThan(300_000); // within 5 minutes after a 10-minute tick
  });

  it("an extension brings back ticks that lay past the old expiry", async () => {
    const s = await schedule({ cron: "0 0 1 1 *", url: `${receiver}/ok/${unique()}`, ttl_seconds: 86400 });
    expect((await s.op("get", "")).next_run_at).toBeNull();
    const extended = await call("POST", `/v1/resources/${s.id}/extend`, {
      body: { ttl_seconds: 365 * 86400 },
      headers: managed(s.mgmt, s.token),
    });
    expect(extended.status).toBe(200);
    const next = (await s.op("get", "")).next_run_at;
    expect(next).toMatch(/-01-01T00:00:00/);
  });

  it("refuses a bad cron, time zone or period with 422 and charges nothing", async () => {
    const { token } = await buyCredits(1);
    const auth = { authorization: `Bearer ${token}` };
    const url = `${receiver}/ok/x`;
    const cases: [Record<string, unknown>, string][] = [
      [{ cron: "0 0 9 * * *", url }, "cron"],
      [{ cron: "not a cron", url }, "cron"],
      [{ cron: "* * * * *", timezone: "Mars/Olympus_Mons", url }, "timezone"],
      [{ cron: "* * * * *", url, start_at: "2027-01-02T00:00:00Z", end_at: "2027-01-01T00:00:00Z" }, "end_at"],
    ];
    for (const [body, path] of cases) {
      const res = await call("POST", "/v1/schedules", { body, headers: auth });
      expect(res.status).toBe(422);
      expect((await json<Problem>(res)).errors!.map((e: { path: string }) => e.path)).toContain(path);
    }
    expect((await json(await call("GET", "/v1/credits/balance", { headers: auth }))).spent_usd).toBe(0);
  });
});
