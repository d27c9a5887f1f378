/**
 * watch-groups, per docs/kinds.md and issue 16: nested expressions and "K of N" across transitions,
 * unknown (paused) children in three-valued logic, one event per group transition (never one
 * per child), a group of groups, and the history naming the child that caused each transition.
 * Watches tell their groups through relays over the real queue, so the tests wait for the news.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { watches } from "../../src/kinds/watching/watches";
import { watchGroups } from "../../src/kinds/watching/watch-groups";
import { escalations } from "../../src/kinds/watching/escalations";
import type { EventEnvelope } from "../../src/delivery/events";
import {
  advance,
  buyCredits,
  call,
  createResource,
  opsOn,
  problemOf,
  received,
  serveContent,
  verifierOf,
} from "../harness";

const receiver = env.TEST_RECEIVER_URL;
const unique = () => crypto.randomUUID().slice(0, 8);

/** Polls `read` until `done` holds (relays cross a real queue): its last value. */
async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, what: string): Promise<T> {
  for (let i = 0; i < 100; i++) {
    const v = await read();
    if (done(v)) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`never: ${what}`);
}

/** A watch of a page the test makes healthy or not; `set` changes it and lets the watch check. */
async function switchable(token: string) {
  const name = unique();
  const url = await serveContent(name, "ok");
  const created = await createResource("watches", token, { check: { type: "http_status", url }, interval_seconds: 60 });
  let checks = 0;
  return {
    ...created,
    ops: opsOn(watches, created.id, created.mgmt, token),
    set: async (up: boolean) => {
      await serveContent(name, up ? "ok" : "failing", { status: up ? 200 : 500 });
      await advance(created.id, checks++ === 0 ? 0 : 60_000);
    },
  };
}

async function group(
  token: string,
  children: Record<string, string>,
  expression: unknown,
  extra: Record<string, unknown> = {},
) {
  const events = unique();
  const created = await createResource("watch-groups", token, {
    children,
    expression,
    notify_url: `${receiver}/ok/${events}`,
    ...extra,
  });
  const ops = opsOn(watchGroups, created.id, created.mgmt, token);
  const verifier = verifierOf(created.record);
  return {
    ...created,
    ops,
    state: () => ops.ok("get", ""),
    /** Waits until the group has heard `states` of its children (by alias). */
    hears: (states: Record<string, string>) =>
      until(
        () => ops.ok("get", ""),
        (g) => Object.entries(states).every(([a, s]) => g.children.find((c) => c.alias === a)?.state === s),
        JSON.stringify(states),
      ),
    events: async (count: number) =>
      (await received(events, count)).map((r) => verifier.verify(r.body, r.headers) as EventEnvelope),
    settledCount: async () => {
      await new Promise((r) => setTimeout(r, 1200));
      return ((await (await fetch(`${receiver}/_log/${events}`)).json()) as unknown[]).length;
    },
  };
}

describe("watch-groups", () => {
  it("a nested expression with K of N: one event per group transition, with its cause; not one per child", async () => {
    const { token } = await buyCredits(2);
    const [api, db1, db2, db3] = [
      await switchable(token),
      await switchable(token),
      await switchable(token),
      await switchable(token),
    ];
    for (const w of [api, db1, db2, db3]) await w.set(true);
    const g = await group(
      token,
      { api: api.mgmt, db1: db1.mgmt, db2: db2.mgmt, db3: db3.mgmt },
      { or: ["api", { at_least: 2, of: ["db1", "db2", "db3"] }] },
    );
    expect(g.record.config).toMatchObject({ children: { api: api.id, db1: db1.id } }); // only ids are kept
    await g.hears({ api: "up", db1: "up", db2: "up", db3: "up" });
    expect(await g.state()).toMatchObject({ state: "up", alerts_sent: 0 });
    expect(await g.settledCount()).toBe(0); // unknown → up is no incident

    await db1.set(false); // one of three databases: not enough
    await g.hears({ db1: "down" });
    expect((await g.state()).state).toBe("up");
    await api.set(false); // the api alone is enough
    await g.hears({ api: "down" });
    expect(await g.state()).toMatchObject({ state: "down", alerts_sent: 1 });
    const [down] = await g.events(1);
    expect(down).toMatchObject({
      type: "group.down",
      resource_id: g.id,
      data: {
        state: "down",
        cause: { alias: "api", id: api.id, state: "down" },
        children: { api: "down", db1: "down", db2: "up", db3: "up" },
      },
    });

    await db2.set(false); // still down: a second child in the same incident sends nothing
    await g.hears({ db2: "down" });
    await api.set(true); // the databases keep it down: 2 of 3
    await g.hears({ api: "up" });
    expect((await g.state()).state).toBe("down");
    expect(await g.settledCount()).toBe(1);

    await db1.set(true);
    await g.hears({ db1: "up" });
    expect((await g.state()).state).toBe("up");
    const [, up] = await g.events(2);
    expect(up).toMatchObject({
      type: "group.up",
      data: { state: "up", cause: { alias: "db1", state: "up" }, downtime_seconds: expect.any(Number) },
    });
    expect(await g.settledCount()).toBe(2);

    const history = await g.ops.ok("transitions", "/transitions");
    expect(history.items.map((t) => [t.from, t.to, t.cause?.alias])).toEqual([
      ["down", "up", "db1"],
      ["up", "down", "api"],
      ["unknown", "up", expect.any(String)],
    ]);
  });

  it("unknown children (paused) alone decide nothing: group goes unknown, no event, keeps its incident", async () => {
    const { token } = await buyCredits(2);
    const [a, b] = [await switchable(token), await switchable(token)];
    await a.set(true);
    await b.set(true);
    const g = await group(token, { a: a.mgmt, b: b.mgmt }, { and: ["a", "b"] });
    await g.hears({ a: "up", b: "up" });
    await b.ops.ok("pause", "/pause");
    await g.hears({ b: "unknown" });
    expect((await g.state()).state).toBe("up"); // a is up: and() is false whatever b is
    await a.set(false);
    await g.hears({ a: "down" });
    expect((await g.state()).state).toBe("unknown"); // a down, b unknown: undecided
    expect(await g.settledCount()).toBe(0);
    await b.ops.ok("resume", "/resume");
    await b.set(false);
    await g.hears({ b: "down" });
    expect(await g.state()).toMatchObject({ state: "down", alerts_sent: 1 });
    expect((await g.events(1))[0]).toMatchObject({ type: "group.down", data: { cause: { alias: "b" } } });
  });

  it("a group of groups, with not: the inner group's transitions reach the outer one", async () => {
    const { token } = await buyCredits(2);
    const [x, y, maint] = [await switchable(token), await switchable(token), await switchable(token)];
    for (const w of [x, y, maint]) await w.set(true);
    const inner = await group(token, { x: x.mgmt, y: y.mgmt }, { or: ["x", "y"] });
    // The outer group alerts when the inner one is down and the maintenance flag watch is not.
    const outer = await group(token, { inner: inner.mgmt, maint: maint.mgmt }, { and: ["inner", { not: "maint" }] });
    await outer.hears({ inner: "up", maint: "up" });
    await y.set(false);
    await inner.hears({ y: "down" });
    await outer.hears({ inner: "down" });
    expect(await outer.state()).toMatchObject({ state: "down" });
    expect((await outer.events(1))[0]).toMatchObject({
      type: "group.down",
      data: { cause: { alias: "inner", id: inner.id, state: "down" } },
    });
    expect((await inner.ops.ok("get", "")).state).toBe("down");
  });

  it("a group going down opens an incident on its escalation, and its recovery resolves it", async () => {
    const { token } = await buyCredits(2);
    const steps = unique();
    const policy = await createResource("escalations", token, {
      steps: [
        { delay_seconds: 0, targets: [{ url: `${receiver}/ok/${steps}` }] },
        { delay_seconds: 3600, targets: [{ url: `${receiver}/ok/${steps}` }] },
      ],
    });
    const [a, b] = [await switchable(token), await switchable(token)];
    await a.set(true);
    await b.set(true);
    const g = await group(
      token,
      { a: a.mgmt, b: b.mgmt },
      { at_least: 2, of: ["a", "b"] },
      { escalation: policy.mgmt },
    );
    await g.hears({ a: "up", b: "up" });
    await a.set(false);
    await b.set(false);
    await g.hears({ a: "down", b: "down" });
    const [step] = await received(steps, 1);
    const incident = JSON.parse(step!.body).data as { incident_id: string; source: string; title: string };
    // Named for people: by the children's aliases (no label was given), never by the resource id.
    expect(incident).toMatchObject({
      source: g.id,
      title: expect.stringMatching(/^Watch group of [a-z_, ]+ is down$/),
    });
    await a.set(true);
    await g.hears({ a: "up" });
    const escalation = opsOn(escalations, policy.id, policy.mgmt, token);
    const resolved = await until(
      () => escalation.ok("get_incident", `/incidents/${incident.incident_id}`),
      (i) => i.state === "resolved",
      "resolved",
    );
    expect(resolved).toMatchObject({ resolved_by: g.id, steps_sent: 1 });
  });

  it("refuses what cannot be evaluated with 422, uncharged", async () => {
    const { token } = await buyCredits(1);
    const w = await switchable(token);
    const refused = async (body: Record<string, unknown>, field: string) => {
      const problem = await problemOf(
        await call("POST", "/v1/watch-groups", { body, headers: { authorization: `Bearer ${token}` } }),
        422,
      );
      expect(JSON.stringify(problem.errors ?? problem.detail), JSON.stringify(body)).toContain(field);
    };
    await refused({ children: { a: w.mgmt }, expression: "b" }, "expression");
    await refused({ children: { a: w.mgmt }, expression: { at_least: 2, of: ["a"] } }, "expression");
    await refused({ children: { a: w.mgmt, b: w.mgmt }, expression: { or: ["a", "b"] } }, "children");
    await refused({ children: { a: w.mgmt, unused: w.mgmt }, expression: "a" }, "children");
    await refused({ children: { a: "zvm_nosuchresource" }, expression: "a" }, "children.a");
    await refused({ children: { "Bad Alias": w.mgmt }, expression: "a" }, "children");
    await refused({ children: { a: w.mgmt }, expression: { xor: ["a"] } }, "expression");
    let deep: unknown = "a";
    for (let i = 0; i < 9; i++) deep = { not: deep };
    await refused({ children: { a: w.mgmt }, expression: deep }, "expression");
    const notify = await createResource("notify", token, { channels: [`json://${new URL(receiver).host}/ok/x`] });
    await refused({ children: { a: notify.mgmt }, expression: "a" }, "children.a");
  });
});
