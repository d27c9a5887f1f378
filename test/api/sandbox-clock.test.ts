/**
 * A sandbox's clock, per docs/api.md#sandboxes: one call moves it, and what falls due on the way
 * fires in order, kind by kind, as the real resources would fire it: a schedule at each occurrence
 * across a DST change (as croner computes them), a dead-man late then down (its payload released
 * once), a watch probing a real local target once per simulated interval, an escalation's second
 * level after its delay, and the three together through three simulated days (docs' worked example).
 */
import { env } from "cloudflare:test";
import { Cron } from "croner";
import { describe, expect, it } from "vitest";
import { balanceOf, buyCredits, call, createResource, json, mcpTool, received } from "../harness";

const receiver = env.TEST_RECEIVER_URL;
const unique = () => crypto.randomUUID().slice(0, 8);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

type Event = {
  at: string;
  resource_id: string | null;
  kind: string | null;
  type: string;
  detail: Record<string, unknown>;
};

async function sandbox() {
  const res = await call("POST", "/v1/sandboxes", { body: {} });
  expect(res.status).toBe(201);
  const made = await json(res);
  const auth = { authorization: `Bearer ${made.credit_token}` };
  const move = async (body: Record<string, unknown>) => {
    const moved = await call("POST", `/v1/sandboxes/${made.id}/clock`, { body, headers: auth });
    const text = await moved.text();
    expect(moved.status, text).toBe(200);
    return JSON.parse(text) as { from: string; to: string; reached: string; more: boolean; fired: Event[] };
  };
  const timeline = async () => {
    const items: Event[] = [];
    for (let cursor: string | null = ""; cursor !== null;) {
      const page: { items: Event[]; next_cursor: string | null } = await json(
        await call("GET", `/v1/sandboxes/${made.id}/timeline?limit=100${cursor ? `&cursor=${cursor}` : ""}`, {
          headers: auth,
        }),
      );
      items.push(...page.items);
      cursor = page.next_cursor;
    }
    return items;
  };
  const now = async () =>
    Date.parse((await json<{ now: string }>(await call("GET", `/v1/sandboxes/${made.id}`, { headers: auth }))).now);
  return { id: made.id as string, token: made.credit_token as string, auth, move, timeline, now };
}

/** Deliveries of `type` among what fired, in the order they fired. */
const sent = (fired: Event[], type: string) =>
  fired.filter((e) => e.type === "delivery" && e.detail.event_type === type);

/** The first moment after `from` at which America/New_York's UTC offset changes. */
function nextDstChange(zone: string, from: number): number {
  const offset = (t: number) =>
    new Intl.DateTimeFormat("en-US", { timeZone: zone, timeZoneName: "longOffset" })
      .format(new Date(t))
      .split(" ")
      .pop();
  const start = offset(from);
  let t = from;
  while (offset(t) === start) t += HOUR;
  return t;
}

describe("a sandbox's clock", () => {
  it("fires a schedule at each occurrence across a DST change, as croner computes them", async () => {
    const s = await sandbox();
    const zone = "America/New_York";
    const change = nextDstChange(zone, Date.now());
    // Two days before the change, with nothing in the sandbox yet: the move is instant.
    await s.move({ to: new Date(change - 2 * DAY).toISOString() });
    const name = unique();
    const created = await createResource("schedules", s.token, {
      cron: "0 9 * * *",
      timezone: zone,
      url: `${receiver}/ok/${name}`,
      ttl_seconds: 10 * 86400,
    });
    const start = await s.now();
    const moved = await s.move({ advance_seconds: 4 * 86400 });
    expect(moved.more).toBe(false);
    const expected = new Cron("0 9 * * *", { timezone: zone }).nextRuns(4, new Date(start)).map((d) => d.toISOString());
    const ticks = sent(moved.fired, "schedule.fired");
    expect(ticks.map((t) => t.at)).toEqual(expected);
    expect(ticks.every((t) => t.resource_id === created.id)).toBe(true);
    // The same local hour, two different UTC hours: the change lies between them.
    expect(new Set(ticks.map((t) => new Date(t.at).getUTCHours())).size).toBe(2);
    expect(await received(name, 4)).toHaveLength(4);
    const status = await json<{ status: { runs: number } }>(
      await call("GET", `/v1/resources/${created.id}`, { headers: { authorization: `Bearer ${created.mgmt}` } }),
    );
    expect(status.status.runs).toBe(4);
    expect(moved.reached).toBe(moved.to);
    expect(Date.parse(moved.to) - Date.parse(moved.from)).toBe(4 * DAY);
    expect(Math.abs((await s.now()) - Date.parse(moved.to))).toBeLessThan(30_000);
  });

  it("takes a dead-man late, then down, at the right simulated times, and releases its payload once", async () => {
    const s = await sandbox();
    const [alerts, successor] = [unique(), unique()];
    const d = await createResource("deadman", s.token, {
      period_seconds: 3600,
      grace_seconds: 600,
      notify_late: true,
      alert_url: `${receiver}/ok/${alerts}`,
      successor_url: `${receiver}/ok/${successor}`,
    });
    const headers = { authorization: `Bearer ${d.mgmt}`, "x-credit-token": s.token };
    expect(
      (await call("POST", `/v1/deadman/${d.id}/payload`, { body: { payload: { secret: "combination" } }, headers }))
        .status,
    ).toBe(200);
    expect((await call("GET", new URL(d.record.urls.public!).pathname)).status).toBe(200);
    const pinged = Date.parse(
      (await json<{ status: { last_ping_at: string } }>(await call("GET", `/v1/resources/${d.id}`, { headers }))).status
        .last_ping_at,
    );

    const moved = await s.move({ advance_seconds: 3 * 3600 });
    const late = sent(moved.fired, "deadman.late");
    const down = sent(moved.fired, "deadman.down");
    expect(late).toHaveLength(1);
    expect(down).toHaveLength(1);
    expect(Date.parse(late[0]!.at)).toBe(pinged + HOUR);
    expect(Date.parse(down[0]!.at)).toBe(pinged + HOUR + 10 * MINUTE);
    expect(sent(moved.fired, "deadman.payload")).toHaveLength(1);
    const released = await received(successor, 1);
    expect(released[0]!.body).toContain("combination");
    await s.move({ advance_seconds: 86400 });
    await new Promise((r) => setTimeout(r, 1200));
    expect(await (await fetch(`${receiver}/_log/${successor}`)).json()).toHaveLength(1);
  });

  it("probes a watch's real target once per simulated interval, and alerts after alert_after failures", async () => {
    const s = await sandbox();
    const [target, events] = [unique(), unique()];
    const w = await createResource("watches", s.token, {
      check: { type: "http_status", url: `${receiver}/down/${target}` },
      interval_seconds: 60,
      alert_after: 3,
      notify_url: `${receiver}/ok/${events}`,
    });
    const start = await s.now();
    await s.move({ advance_seconds: 10 * 60 });
    // The first check is made at once (by the watch's own alarm, or the move's first step): the timeline has it either
    // way.
    const timeline = await s.timeline();
    const checks = timeline.filter((e) => e.type === "timer" && e.resource_id === w.id);
    const probes = (await (await fetch(`${receiver}/_log/${target}`)).json()) as unknown[];
    expect(probes).toHaveLength(checks.length);
    const times = checks.map((c) => Date.parse(c.at));
    expect(times[0]! - start).toBeLessThan(5_000);
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBe(MINUTE);
    expect(times.length).toBe(Math.floor((start + 10 * MINUTE - times[0]!) / MINUTE) + 1);
    const down = sent(timeline, "watch.down");
    expect(down).toHaveLength(1);
    expect(down[0]!.at).toBe(checks[2]!.at);
    expect(JSON.parse((await received(events, 1))[0]!.body)).toMatchObject({
      type: "watch.down",
      data: { consecutive_failures: 3 },
    });
  });

  it("pages an escalation's second level after its simulated delay", async () => {
    const s = await sandbox();
    const [first, second] = [unique(), unique()];
    const p = await createResource("escalations", s.token, {
      steps: [
        { delay_seconds: 0, targets: [{ url: `${receiver}/ok/${first}` }] },
        { delay_seconds: 1800, targets: [{ url: `${receiver}/ok/${second}` }] },
      ],
    });
    const headers = { authorization: `Bearer ${p.mgmt}`, "x-credit-token": s.token };
    const opened = await call("POST", `/v1/escalations/${p.id}/incidents`, {
      body: { title: "Checkout is failing" },
      headers,
    });
    expect(opened.status).toBeLessThan(300);
    await s.move({ advance_seconds: 3600 });
    // The first level (no delay) may go out by the resource's own alarm before the move: the timeline has both.
    const steps = sent(await s.timeline(), "escalation.step");
    expect(steps.map((e) => e.detail.url)).toEqual([`${receiver}/ok/${first}`, `${receiver}/ok/${second}`]);
    // The delay runs from when the first level went out (its own alarm runs a moment after it was due).
    const apart = Date.parse(steps[1]!.at) - Date.parse(steps[0]!.at);
    expect(apart).toBeGreaterThanOrEqual(30 * MINUTE);
    expect(apart).toBeLessThan(30 * MINUTE + 5_000);
    expect(JSON.parse((await received(second, 1))[0]!.body).data).toMatchObject({ step: 2 });
  });
});

describe("a create's own times in a sandbox", () => {
  it("follow the sandbox's clock: past real time's reach is fine, past the sandbox's is 422, uncharged", async () => {
    const s = await sandbox();
    await s.move({ advance_seconds: 30 * 86400 });
    const name = unique();
    const wakeup = (at: number) =>
      call("POST", "/v1/wakeups", {
        body: { ttl_seconds: 86400, url: `${receiver}/sbx-at/${name}`, at: new Date(at).toISOString() },
        headers: s.auth,
      });
    // An hour after the sandbox's now: a month past the real life of a one-day resource, within its sandbox life.
    const ahead = await wakeup((await s.now()) + HOUR);
    expect(ahead.status, await ahead.clone().text()).toBe(201);
    const spent = (await balanceOf(s.token)).spent_usd;
    // Past the resource's life on the sandbox's clock too: 422, nothing charged, nothing made.
    const past = await wakeup((await s.now()) + 2 * DAY);
    expect(past.status).toBe(422);
    expect((await json<{ errors: { path: string }[] }>(past)).errors[0]!.path).toBe("at");
    expect((await balanceOf(s.token)).spent_usd).toBe(spent);
    const view = await json<{ resources: unknown[] }>(await call("GET", `/v1/sandboxes/${s.id}`, { headers: s.auth }));
    expect(view.resources).toHaveLength(1);
    // The one made fires when the sandbox's clock reaches it.
    const moved = await s.move({ advance_seconds: 2 * 3600 });
    expect(sent(moved.fired, "wakeup.fired").length + moved.fired.filter((e) => e.type === "delivery").length).toBe(2);
    // Real money is checked against real time, as ever.
    const { token } = await buyCredits(1);
    const real = await call("POST", "/v1/wakeups", {
      body: { ttl_seconds: 86400, url: `${receiver}/sbx-at/${name}`, at: new Date(Date.now() + 3 * 86400_000) },
      headers: { authorization: `Bearer ${token}` },
    });
    expect(real.status).toBe(422);
  });
});

describe("a sandbox's clock, the worked example of docs/api.md#sandboxes", () => {
  it("runs a schedule, a dead-man and an escalation through three simulated days in one call", async () => {
    const s = await sandbox();
    const [daily, alerts, levelOne, levelTwo] = [unique(), unique(), unique(), unique()];
    const schedule = await createResource("schedules", s.token, {
      cron: "0 9 * * *",
      timezone: "Europe/Berlin",
      url: `${receiver}/ok/${daily}`,
    });
    const deadman = await createResource("deadman", s.token, {
      period_seconds: 86400,
      grace_seconds: 3600,
      alert_url: `${receiver}/ok/${alerts}`,
    });
    const escalation = await createResource("escalations", s.token, {
      steps: [
        { delay_seconds: 0, targets: [{ url: `${receiver}/ok/${levelOne}` }] },
        { delay_seconds: 900, targets: [{ url: `${receiver}/ok/${levelTwo}` }] },
      ],
    });
    // A day-long resource: its TTL runs out on the way.
    const brief = await createResource("counters", s.token, { ttl_seconds: 86400 });
    expect((await call("GET", new URL(deadman.record.urls.public!).pathname)).status).toBe(200);
    const opened = await call("POST", `/v1/escalations/${escalation.id}/incidents`, {
      body: { title: "Disk almost full" },
      headers: { authorization: `Bearer ${escalation.mgmt}`, "x-credit-token": s.token },
    });
    expect(opened.status).toBeLessThan(300);

    const moved = await s.move({ advance_seconds: 3 * 86400 });
    expect(moved.more).toBe(false);
    const timeline = await s.timeline();
    const atOf = (events: Event[]) => events.map((e) => Date.parse(e.at));
    // Each tick at 09:00 in Berlin, three of them.
    const ticks = sent(timeline, "schedule.fired");
    expect(ticks).toHaveLength(3);
    for (const t of ticks)
      expect(
        new Intl.DateTimeFormat("en-GB", { timeZone: "Europe/Berlin", hour: "2-digit", minute: "2-digit" }).format(
          new Date(t.at),
        ),
      ).toBe("09:00");
    // The dead-man, pinged once, is down a day and an hour later.
    expect(sent(timeline, "deadman.down")).toHaveLength(1);
    // The escalation's second level, a quarter of an hour after the first.
    const steps = atOf(sent(timeline, "escalation.step"));
    expect(steps).toHaveLength(2);
    expect(steps[1]! - steps[0]!).toBeGreaterThanOrEqual(15 * MINUTE);
    // The counter's TTL ran out in simulated time.
    expect(timeline.find((e) => e.resource_id === brief.id && e.type === "expired")).toBeDefined();
    expect(
      (await call("GET", `/v1/resources/${brief.id}`, { headers: { authorization: `Bearer ${brief.mgmt}` } })).status,
    ).toBe(410);
    // The timeline is in time order, and the move answered what the timeline holds of it.
    const times = atOf(timeline);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    for (const e of moved.fired) expect(timeline).toContainEqual(e);
    expect(await received(daily, 3)).toHaveLength(3);
    expect(await received(levelTwo, 1)).toHaveLength(1);
    expect(schedule.id).toMatch(/^r_/);
  });

  it("stops at its limits, says more remains, and goes on from there", async () => {
    const s = await sandbox();
    const target = unique();
    await createResource("watches", s.token, {
      check: { type: "http_status", url: `${receiver}/ok/${target}` },
      interval_seconds: 60,
      ttl_seconds: 40 * 86400,
    });
    const moved = await s.move({ advance_seconds: 30 * 86400 });
    expect(moved.more).toBe(true);
    expect(Date.parse(moved.reached)).toBeLessThan(Date.parse(moved.to));
    expect(moved.fired.length).toBeLessThanOrEqual(1_100);
    const probes = ((await (await fetch(`${receiver}/_log/${target}`)).json()) as unknown[]).length;
    expect(probes).toBeLessThanOrEqual(1_100);
    expect(Math.abs((await s.now()) - Date.parse(moved.reached))).toBeLessThan(60_000);
    const next = await s.move({ advance_seconds: 120 });
    expect(Date.parse(next.from)).toBeGreaterThanOrEqual(Date.parse(moved.reached));
  });
});

describe("sandboxes over MCP", () => {
  it("a connection with the sandbox's token creates in it and moves its clock", async () => {
    const { token } = await buyCredits(1);
    const made = await mcpTool(token, "create_sandbox", { label: "over mcp" });
    expect(made.isError).toBeFalsy();
    const box = made.structuredContent as { credit_token: string; id: string };
    const counter = await mcpTool(box.credit_token, "create_counters", { ttl_seconds: 3600 });
    expect(counter.isError).toBeFalsy();
    const moved = await mcpTool(box.credit_token, "move_sandbox_clock", { id: box.id, advance_seconds: 7200 });
    expect(moved.isError).toBeFalsy();
    expect(moved.structuredContent.fired).toContainEqual(
      expect.objectContaining({ resource_id: String(counter.structuredContent.id), type: "expired" }),
    );
    const timeline = await mcpTool(box.credit_token, "sandbox_timeline", { id: box.id });
    expect((timeline.structuredContent.items as Event[]).map((e) => e.type)).toEqual(
      expect.arrayContaining(["sandbox_created", "created", "expired", "clock"]),
    );
    const refused = await mcpTool(token, "move_sandbox_clock", { id: box.id, advance_seconds: 60 });
    expect(refused.isError).toBe(true);
  });
});
