/**
 * A sandbox's deliveries, per docs/api.md#sandboxes: made with `deliveries: "log"`, its resources' requests go to the
 * sandbox's delivery log instead of their targets (through the one delivery pipeline, signed, secrets masked), and
 * show in its timeline; sent for real, a failing delivery is retried on the sandbox's clock, each attempt at its
 * simulated time.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, json, mcpTool, problemOf, createResource, verifierOf, type DeliveryPage } from "../harness";

const receiver = env.TEST_RECEIVER_URL;
const unique = () => crypto.randomUUID().slice(0, 8);
const SECOND = 1000;

type Event = { at: string; resource_id: string | null; type: string; detail: Record<string, unknown> };
type Logged = {
  seq: number;
  at: string;
  resource_id: string;
  delivery_id: string;
  event_type: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | null;
  body_bytes: number | null;
  body_sha256: string | null;
  body_withheld: boolean;
};

async function sandbox(body: Record<string, unknown> = {}) {
  const res = await call("POST", "/v1/sandboxes", { body });
  const text = await res.text();
  expect(res.status, text).toBe(201);
  const made = JSON.parse(text) as { id: string; credit_token: string; deliveries: string };
  const auth = { authorization: `Bearer ${made.credit_token}` };
  const move = async (advance_seconds: number) => {
    const moved = await call("POST", `/v1/sandboxes/${made.id}/clock`, { body: { advance_seconds }, headers: auth });
    const answer = await moved.text();
    expect(moved.status, answer).toBe(200);
    return JSON.parse(answer) as { fired: Event[]; more: boolean };
  };
  const page = async <T>(what: "timeline" | "deliveries", query = "limit=100") => {
    const res = await call("GET", `/v1/sandboxes/${made.id}/${what}?${query}`, { headers: auth });
    expect(res.status).toBe(200);
    return json<{ items: T[]; next_cursor: string | null }>(res);
  };
  return { made, id: made.id, token: made.credit_token, auth, move, page };
}

const hex = async (text: string) =>
  [...new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)))]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("");

const noneArrived = async (name: string) => {
  await new Promise((r) => setTimeout(r, 1500));
  expect(await (await fetch(`${receiver}/_log/${name}`)).json()).toEqual([]);
};

describe("a sandbox's delivery log", () => {
  it("takes its resources' requests in place of their targets, signed, secrets masked, in the timeline", async () => {
    const s = await sandbox({ deliveries: "log" });
    expect(s.made.deliveries).toBe("log");
    const name = unique();
    const wakeup = await createResource("wakeups", s.token, {
      delay_seconds: 3600,
      url: `${receiver}/ok/${name}`,
      headers: { authorization: "Bearer sk_live_do_not_show", "x-trace": "t-1" },
      body: { hello: "world" },
    });
    const moved = await s.move(2 * 3600);
    expect(moved.more).toBe(false);
    const logged = moved.fired.filter((e) => e.type === "logged");
    expect(logged).toHaveLength(1);

    const log = await s.page<Logged>("deliveries");
    expect(log.items).toHaveLength(1);
    const entry = log.items[0]!;
    expect(entry).toMatchObject({
      resource_id: wakeup.id,
      event_type: "wakeup.fired",
      method: "POST",
      url: `${receiver}/ok/${name}`,
      body: '{"hello":"world"}',
      body_bytes: 17,
      body_sha256: await hex('{"hello":"world"}'),
      body_withheld: false,
    });
    expect(entry.headers.authorization).toBe("[masked]");
    expect(entry.headers["x-trace"]).toBe("t-1");
    expect(JSON.stringify(log)).not.toContain("sk_live_do_not_show");
    // As it would have been sent: the resource's signature verifies it.
    expect(() => verifierOf(wakeup.record).verify(entry.body!, entry.headers)).not.toThrow();
    // At the simulated moment it fired, and the timeline shows it there.
    expect(Math.abs(Date.parse(entry.at) - Date.parse(logged[0]!.at))).toBeLessThan(5 * SECOND);
    expect(logged[0]!.detail).toMatchObject({ delivery_id: entry.delivery_id, log_seq: entry.seq });
    // Nothing left the service, and the resource's own log has it delivered (to the sandbox's log).
    await noneArrived(name);
    const own = await json<DeliveryPage>(
      await call("GET", `/v1/wakeups/${wakeup.id}/deliveries`, { headers: { authorization: `Bearer ${wakeup.mgmt}` } }),
    );
    expect(own.items[0]).toMatchObject({ id: entry.delivery_id, status: "delivered" });
  });

  it("pages like the other lists, and a secret body keeps neither bytes nor digest", async () => {
    const s = await sandbox({ deliveries: "log" });
    const [alerts, successor] = [unique(), unique()];
    const d = await createResource("deadman", s.token, {
      period_seconds: 3600,
      grace_seconds: 600,
      notify_late: true,
      alert_url: `${receiver}/ok/${alerts}`,
      successor_url: `${receiver}/ok/${successor}`,
    });
    const headers = { authorization: `Bearer ${d.mgmt}`, "x-credit-token": s.token };
    const sealed = await call("POST", `/v1/deadman/${d.id}/payload`, {
      body: { payload: { secret: "the combination" } },
      headers,
    });
    expect(sealed.status).toBe(200);
    expect((await call("GET", new URL(d.record.urls.public!).pathname)).status).toBe(200); // its one ping
    await s.move(3 * 3600);
    const all = await s.page<Logged>("deliveries");
    const types = all.items.map((e) => e.event_type);
    expect(types).toEqual(expect.arrayContaining(["deadman.late", "deadman.down", "deadman.payload"]));
    const payload = all.items.find((e) => e.event_type === "deadman.payload")!;
    expect(payload).toMatchObject({ body: null, body_sha256: null, body_withheld: true });
    expect(JSON.stringify(all)).not.toContain("the combination");
    // One at a time, oldest first, by cursor.
    const seen: number[] = [];
    for (let cursor: string | null = ""; cursor !== null;) {
      const one: { items: Logged[]; next_cursor: string | null } = await s.page<Logged>(
        "deliveries",
        `limit=1${cursor ? `&cursor=${cursor}` : ""}`,
      );
      seen.push(...one.items.map((e) => e.seq));
      cursor = one.next_cursor;
    }
    expect(seen).toEqual(all.items.map((e) => e.seq));
    await noneArrived(successor);
  });

  it("is the sandbox's own: another token, a bad mode, bad paging are refused", async () => {
    const s = await sandbox({ deliveries: "log" });
    const other = await sandbox();
    expect(other.made.deliveries).toBe("send");
    await problemOf(await call("GET", `/v1/sandboxes/${s.id}/deliveries`, { headers: other.auth }), 403);
    await problemOf(await call("GET", `/v1/sandboxes/${s.id}/deliveries`), 401);
    await problemOf(await call("GET", `/v1/sandboxes/${s.id}/deliveries?limit=0`, { headers: s.auth }), 422);
    await problemOf(await call("POST", "/v1/sandboxes", { body: { deliveries: "drop" } }), 422);
    expect((await other.page<Logged>("deliveries")).items).toEqual([]);
  });

  it("is reachable over MCP by name, and in the OpenAPI document with an example", async () => {
    const s = await sandbox({ deliveries: "log" });
    const listed = await mcpTool(s.token, "sandbox_deliveries", { id: s.id });
    expect(listed.isError).toBeFalsy();
    expect(listed.structuredContent.items).toEqual([]);
    type Operation = { responses: Record<string, { content: Record<string, { example: { items: unknown[] } }> }> };
    const doc = await json<{ paths: Record<string, Record<string, Operation>> }>(await call("GET", "/openapi.json"));
    const op = doc.paths["/v1/sandboxes/{id}/deliveries"]!.get!;
    expect(op.responses["200"]!.content["application/json"]!.example.items.length).toBe(1);
  });
});

describe("a sandbox's retries", () => {
  it("fall due on the sandbox's clock: a receiver failing twice is tried thrice at the schedule's times", async () => {
    const s = await sandbox();
    const name = unique();
    const wakeup = await createResource("wakeups", s.token, { delay_seconds: 60, url: `${receiver}/fail/2/${name}` });
    const moved = await s.move(3600);
    expect(moved.more).toBe(false);
    const timeline = (await s.page<Event>("timeline")).items;
    const attempts = timeline.filter((e) => e.type === "attempt" && e.resource_id === wakeup.id);
    expect(attempts.map((a) => a.detail.outcome)).toEqual(["failed", "failed", "delivered"]);
    expect(attempts.map((a) => a.detail.attempt)).toEqual([1, 2, 3]);
    expect(attempts.map((a) => a.detail.status)).toEqual(["retrying", "retrying", "delivered"]);
    const [first, second, third] = attempts.map((a) => Date.parse(a.at));
    const fired = timeline.find((e) => e.type === "timer" && e.resource_id === wakeup.id)!;
    // The first when the wakeup fired; the next after the schedule's 5 s, then its 5 min (each from the failure's
    // answer, which comes a moment after its attempt went out).
    expect(first! - Date.parse(fired.at)).toBeLessThan(5 * SECOND);
    expect(second! - first!).toBeGreaterThanOrEqual(5 * SECOND);
    expect(second! - first!).toBeLessThan(10 * SECOND);
    expect(third! - second!).toBeGreaterThanOrEqual(300 * SECOND);
    expect(third! - second!).toBeLessThan(305 * SECOND);
    expect(attempts[0]!.detail.retry_at).toBe(new Date(Date.parse(attempts[0]!.at) + 5 * SECOND).toISOString());
    // The move answered them, in time order, and the receiver saw three requests.
    const times = timeline.map((e) => Date.parse(e.at));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect(moved.fired.filter((e) => e.type === "attempt")).toHaveLength(3);
    expect(await (await fetch(`${receiver}/_log/${name}`)).json()).toHaveLength(3);
    // The resource's own log shows the same attempts on its clock.
    const own = await json<DeliveryPage>(
      await call("GET", `/v1/wakeups/${wakeup.id}/deliveries`, { headers: { authorization: `Bearer ${wakeup.mgmt}` } }),
    );
    expect(own.items[0]).toMatchObject({ status: "delivered", attempts: 3 });
  });
});
