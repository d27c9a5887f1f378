/**
 * escalations, per docs/kinds.md and issue 16: steps fire at their delays to their targets, the chain
 * repeats, an acknowledgement (API or the ack address) stops it, and a watch that goes down opens
 * an incident that its recovery resolves; every step and who acknowledged are in the timeline.
 * Time is driven by the test clock. The ack page in a real browser: test/node/pages.test.ts.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { escalations } from "../../src/kinds/watching/escalations";
import { watches } from "../../src/kinds/watching/watches";
import {
  advance,
  buyCredits,
  call,
  createResource,
  opsOn,
  problemOf,
  received,
  serveContent,
  stubOf,
  verifierOf,
} from "../harness";

const receiver = env.TEST_RECEIVER_URL;
const unique = () => crypto.randomUUID().slice(0, 8);
const MINUTE = 60_000;

/** How many requests the receiver got for `name`, after the queue had time to deliver. */
async function settledCount(name: string): Promise<number> {
  await new Promise((r) => setTimeout(r, 1200));
  return ((await (await fetch(`${receiver}/_log/${name}`)).json()) as unknown[]).length;
}

async function policy(token: string, steps: { delay_seconds: number; to: string }[], repeat = 0) {
  const created = await createResource("escalations", token, {
    steps: steps.map((s) => ({ delay_seconds: s.delay_seconds, targets: [{ url: `${receiver}/ok/${s.to}` }] })),
    repeat,
  });
  return { ...created, ops: opsOn(escalations, created.id, created.mgmt, token), verifier: verifierOf(created.record) };
}

describe("escalations", () => {
  it("steps fire at their delays, the chain repeats, then it is exhausted; the timeline has every step", async () => {
    const { token } = await buyCredits(1);
    const [first, second] = [unique(), unique()];
    const p = await policy(
      token,
      [
        { delay_seconds: 0, to: first },
        { delay_seconds: 300, to: second },
      ],
      1,
    );
    const opened = await p.ops.ok("trigger", "/incidents", {
      title: "Checkout is failing",
      details: "5xx above 20%",
      key: "checkout",
    });
    expect(opened).toMatchObject({
      state: "open",
      source: "api",
      steps_sent: 0,
      ack_url: expect.stringMatching(/\/p\/escalations_\w+\/ack\/[0-9a-f]{32}$/),
    });
    // The same key while it is open is the same incident.
    expect((await p.ops.ok("trigger", "/incidents", { title: "again", key: "checkout" })).incident_id).toBe(
      opened.incident_id,
    );

    await advance(p.id, 0);
    const [step1] = await received(first, 1);
    expect(p.verifier.verify(step1!.body, step1!.headers)).toMatchObject({
      type: "escalation.step",
      data: {
        incident_id: opened.incident_id,
        title: "Checkout is failing",
        details: "5xx above 20%",
        step: 1,
        steps: 2,
        round: 1,
        ack_url: opened.ack_url,
      },
    });
    await advance(p.id, 290_000);
    expect(await settledCount(second)).toBe(0);
    await advance(p.id, 10_000);
    expect((await received(second, 1))[0]!.body).toContain('"step":2');
    await advance(p.id, 0); // round 2 starts with the first step's delay (0) after the last step
    expect(JSON.parse((await received(first, 2))[1]!.body).data).toMatchObject({ step: 1, round: 2 });
    await advance(p.id, 300_000);
    await received(second, 2);
    await advance(p.id, 3_600_000);
    expect(await settledCount(first)).toBe(2);
    const done = await p.ops.ok("get_incident", `/incidents/${opened.incident_id}`);
    expect(done).toMatchObject({ state: "open", steps_sent: 4, next_step_at: null });
    expect(done.timeline.map((t) => [t.event, t.step, t.round])).toEqual([
      ["triggered", null, null],
      ["step", 1, 1],
      ["step", 2, 1],
      ["step", 1, 2],
      ["step", 2, 2],
      ["exhausted", null, null],
    ]);
    expect(done.timeline[1]!.targets).toEqual([`${receiver}/ok/${first}`]);
  });

  it("an acknowledgement stops further steps: through the API, or by a POST to the ack address", async () => {
    const { token } = await buyCredits(1);
    const [first, second] = [unique(), unique()];
    const p = await policy(token, [
      { delay_seconds: 0, to: first },
      { delay_seconds: 60, to: second },
    ]);
    const a = await p.ops.ok("trigger", "/incidents", { title: "A" });
    await advance(p.id, 0);
    await received(first, 1);
    expect(await p.ops.ok("ack", `/incidents/${a.incident_id}/ack`, { by: "alice" })).toMatchObject({
      state: "acknowledged",
      acknowledged_by: "alice",
      next_step_at: null,
    });
    await advance(p.id, 10 * MINUTE);
    expect(await settledCount(second)).toBe(0);

    const b = await p.ops.ok("trigger", "/incidents", { title: "B" });
    const ack = await call("POST", new URL(b.ack_url).pathname, {
      body: { by: "bob" },
      headers: { accept: "application/json" },
    });
    expect(ack.status).toBe(200);
    expect(await ack.json()).toMatchObject({
      incident_id: b.incident_id,
      state: "acknowledged",
      acknowledged_by: "bob",
    });
    const page = await call("GET", new URL(b.ack_url).pathname, { headers: { accept: "text/html" } });
    expect(await page.text()).toContain("Acknowledged</strong> by bob");
    // Its first step (no delay) may have gone out before bob's click: the rest of the timeline is this.
    const timeline = (await p.ops.ok("get_incident", `/incidents/${b.incident_id}`)).timeline.filter(
      (t) => t.event !== "step",
    );
    expect(timeline.map((t) => [t.event, t.by])).toEqual([
      ["triggered", "api"],
      ["acknowledged", "bob"],
    ]);
    expect((await call("GET", `${new URL(b.ack_url).pathname.replace(/[0-9a-f]{32}$/, "0".repeat(32))}`)).status).toBe(
      404,
    );
    expect(await p.ops.ok("list", "/incidents?state=acknowledged")).toMatchObject({
      items: [{ incident_id: b.incident_id }, { incident_id: a.incident_id }],
    });
  });

  it("a watch going down opens an incident and its recovery resolves it", async () => {
    const { token } = await buyCredits(1);
    const to = unique();
    const p = await policy(token, [
      { delay_seconds: 0, to },
      { delay_seconds: 600, to },
    ]);
    const page = unique();
    const url = await serveContent(page, "broken", { status: 500 });
    const w = await createResource("watches", token, {
      check: { type: "http_status", url },
      interval_seconds: 60,
      escalation: p.mgmt,
    });
    expect(w.record.config.escalation).toBe(p.id);
    await advance(w.id, 0);
    const [step] = await received(to, 1); // the relay opened it, and its first step went at once
    const opened = JSON.parse(step!.body).data;
    expect(opened).toMatchObject({ source: w.id, title: expect.stringContaining("is down"), step: 1 });
    await serveContent(page, "fine");
    await advance(w.id, MINUTE);
    expect((await opsOn(watches, w.id, w.mgmt, token).ok("get", "")).state).toBe("up");
    for (let i = 0; i < 50; i++) {
      if ((await p.ops.ok("get_incident", `/incidents/${opened.incident_id}`)).state === "resolved") break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await p.ops.ok("get_incident", `/incidents/${opened.incident_id}`)).toMatchObject({
      state: "resolved",
      resolved_by: w.id,
      next_step_at: null,
    });
    await advance(p.id, 20 * MINUTE);
    expect(await settledCount(to)).toBe(1);
  });

  it("a trigger arriving after its own resolve (a retried relay) opens nothing; the next episode does", async () => {
    const { token } = await buyCredits(1);
    const p = await policy(token, [{ delay_seconds: 3600, to: unique() }]);
    const relay = (body: Record<string, unknown>) =>
      stubOf(p.id).relay({ deliveryId: `rly_${unique()}`, from: "r_someWatch", body: JSON.stringify(body) });
    expect((await relay({ type: "resolve", key: "r_someWatch", since: 1000, reason: "recovered" })).ok).toBe(true);
    expect((await relay({ type: "trigger", key: "r_someWatch", since: 1000, title: "down", details: "" })).ok).toBe(
      true,
    );
    expect((await p.ops.ok("list", "/incidents")).items).toEqual([]);
    await relay({ type: "trigger", key: "r_someWatch", since: 2000, title: "down again", details: "" });
    expect((await p.ops.ok("list", "/incidents")).items).toMatchObject([
      { title: "down again", source: "r_someWatch", state: "open" },
    ]);
    expect((await relay({ type: "trigger", key: "x", since: "soon" })).ok).toBe(false); // checked like any input
  });

  it("refuses bad policies and unknown incidents", async () => {
    const { token } = await buyCredits(1);
    const bad = async (body: Record<string, unknown>, field: string) => {
      const problem = await problemOf(
        await call("POST", "/v1/escalations", { body, headers: { authorization: `Bearer ${token}` } }),
        422,
      );
      expect(JSON.stringify(problem.errors ?? problem.detail)).toContain(field);
    };
    await bad({ steps: [] }, "steps");
    await bad({ steps: [{ delay_seconds: -1, targets: [{ url: `${receiver}/ok/x` }] }] }, "steps");
    await bad({ steps: [{ delay_seconds: 0, targets: [{ url: "ftp://example.com/" }] }] }, "steps");
    await bad({ steps: [{ delay_seconds: 0, targets: [{ notify: "zvm_nope" }] }] }, "steps.0.targets.0.notify");
    await bad(
      {
        steps: [
          { delay_seconds: 0, targets: [{ url: `${receiver}/ok/x` }] },
          { delay_seconds: 0, targets: [{ url: `${receiver}/ok/x` }, { url: "https://user:pw@example.com/" }] },
        ],
      },
      "steps.1.targets.1.url",
    );
    await bad({ steps: [{ delay_seconds: 0, targets: [{ url: `${receiver}/ok/x` }] }], repeat: 11 }, "repeat");
    const p = await policy(token, [{ delay_seconds: 0, to: unique() }]);
    expect((await p.ops.refused("ack", `/incidents/inc_${"0".repeat(32)}/ack`, {})).status).toBe(404);
    expect((await p.ops.refused("trigger", "/incidents", { title: "a\u0000b" })).status).toBe(422);
  });
});
