/**
 * What the operator watches, through HTTP: GET /v1/admin/stats equals what the test did (calls,
 * refusals, errors, µUSD charged at exactly the listed prices, revenue, active resources, a
 * delivery that dies and one that gets through), the operator token guards it (and the /admin
 * page, which takes it as HTTP Basic), and the request log line carries the right fields and
 * never a credential.
 */
import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import { buildApp } from "../../src/app";
import { seal } from "../../src/auth/sealing";
import { newSigningSecret } from "../../src/delivery/signing";
import type { WebhookMessage } from "../../src/delivery/messages";
import { sweepOperatorStats } from "../../src/operator";
import { statsAnswer, type StatsAnswer } from "../../src/operator/stats-schema";
import {
  ORIGIN,
  advance,
  buyCredits,
  call,
  createResource,
  json,
  managed,
  type DeliveryPage,
  type OpenApiDocument,
} from "../harness";

const ADMIN = { authorization: "Bearer test-admin-token" };
const BASIC = { authorization: `Basic ${btoa("operator:test-admin-token")}` };
const receiver = env.TEST_RECEIVER_URL;
const unique = () => crypto.randomUUID().slice(0, 8);
const micro = (usd: number) => Math.round(usd * 1e6);

async function stats(days = 30): Promise<StatsAnswer> {
  const res = await call("GET", `/v1/admin/stats?days=${days}`, { headers: ADMIN });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  const parsed = statsAnswer.safeParse(JSON.parse(text));
  expect(parsed.success, parsed.error?.message).toBe(true);
  return parsed.data!;
}

const EMPTY = {
  calls: 0,
  refused: 0,
  errors: 0,
  charged_usd: 0,
  public_requests: 0,
  public_errors: 0,
  active_resources: 0,
};
const kindOf = (s: StatsAnswer, kind: string) => ({ ...EMPTY, ...s.by_kind.find((k) => k.kind === kind) });

/** What changed for `kind` between two answers, money in µUSD. */
function delta(before: StatsAnswer, after: StatsAnswer, kind: string) {
  const [a, b] = [kindOf(before, kind), kindOf(after, kind)];
  return {
    calls: b.calls - a.calls,
    refused: b.refused - a.refused,
    errors: b.errors - a.errors,
    charged_micro: micro(b.charged_usd) - micro(a.charged_usd),
    active: b.active_resources - a.active_resources,
  };
}

async function priceOf(operation: string): Promise<number> {
  const { operations } = await json<{ operations: { operation: string; price_usd: number }[] }>(
    await call("GET", "/v1/prices"),
  );
  const line = operations.find((o) => o.operation === operation);
  expect(line, operation).toBeDefined();
  return micro(line!.price_usd);
}

/** Polls the figures until `until` holds (deliveries cross a real queue). */
async function statsWhen(until: (s: StatsAnswer) => boolean): Promise<StatsAnswer> {
  for (let i = 0; i < 100; i++) {
    const s = await stats();
    if (until(s)) return s;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the figures did not reach the expected state");
}

afterEach(() => vi.restoreAllMocks());

describe("the figures", () => {
  it("equal the calls, refusals, errors and charges made, at the listed prices, and the revenue received", async () => {
    const before = await stats();
    const { token } = await buyCredits(2);
    const a = await createResource("counters", token, { ttl_seconds: 86400 });
    const b = await createResource("counters", token, { ttl_seconds: 86400 });
    for (let i = 0; i < 4; i++)
      expect(
        (await call("POST", `/v1/counters/${a.id}/increment`, { body: { by: 1 }, headers: managed(a.mgmt, token) }))
          .status,
      ).toBe(200);
    expect((await call("GET", `/v1/counters/${a.id}`, { headers: managed(a.mgmt, token) })).status).toBe(200);
    // Refused: a bad body (422) and another resource's management token (4xx); neither is charged.
    expect(
      (await call("POST", `/v1/counters/${a.id}/increment`, { body: { by: "one" }, headers: managed(a.mgmt, token) }))
        .status,
    ).toBe(422);
    const wrong = await call("POST", `/v1/counters/${a.id}/increment`, {
      body: { by: 1 },
      headers: managed(b.mgmt, token),
    });
    expect(wrong.status).toBeGreaterThanOrEqual(400);
    expect(wrong.status).toBeLessThan(500);
    expect((await call("DELETE", `/v1/resources/${b.id}`, { headers: managed(b.mgmt) })).status).toBe(200);
    // Errors: an object fetched from a source that answers 500 is a 502 (upstream_failed), never charged.
    const o = await createResource("objects", token);
    for (let i = 0; i < 2; i++) {
      const res = await call("POST", `/v1/objects/${o.id}/fetch`, {
        body: { source_url: `${receiver}/down/${unique()}` },
        headers: managed(o.mgmt, token),
      });
      expect(res.status, await res.text()).toBe(502);
    }
    const after = await stats();

    const [create, increment, get, objectsCreate] = await Promise.all([
      priceOf("counters.create"),
      priceOf("counters.increment"),
      priceOf("counters.get"),
      priceOf("objects.create"),
    ]);
    expect(delta(before, after, "counters")).toEqual({
      calls: 2 + 4 + 1 + 2,
      refused: 2,
      errors: 0,
      charged_micro: 2 * create + 4 * increment + get,
      active: 1,
    });
    expect(delta(before, after, "objects")).toEqual({
      calls: 3,
      refused: 0,
      errors: 2,
      charged_micro: objectsCreate,
      active: 1,
    });
    expect(micro(after.totals.revenue_usd) - micro(before.totals.revenue_usd)).toBe(micro(2));
    expect(after.totals.payments - before.totals.payments).toBe(1);
    expect(after.totals.calls - before.totals.calls).toBeGreaterThanOrEqual(12);
    // The same, by day: today's row moved by as much (unless the run crossed midnight UTC).
    if (before.to === after.to) {
      const [t0, t1] = [before.by_day.at(-1)!, after.by_day.at(-1)!];
      expect(micro(t1.revenue_usd) - micro(t0.revenue_usd)).toBe(micro(2));
      expect(t1.errors - t0.errors).toBe(2);
      expect(micro(t1.charged_usd) - micro(t0.charged_usd)).toBe(2 * create + 4 * increment + get + objectsCreate);
    }
    expect(after.by_day).toHaveLength(30);
    expect(after.by_day.at(-1)!.day).toBe(new Date().toISOString().slice(0, 10));
    expect((await stats(7)).by_day).toHaveLength(7);
  });

  it("count a delivery that dies as dead, and one that gets through as no longer pending", async () => {
    const before = await stats();
    const { token } = await buyCredits(1);
    const dies = await createResource("counters", token, {
      ttl_seconds: 2 * 3600,
      notify_url: `${receiver}/down/${unique()}`,
    });
    const through = await createResource("counters", token, {
      ttl_seconds: 2 * 3600,
      notify_url: `${receiver}/fail/2/${unique()}`,
    });
    // The 1-hour expiry notice: sent by each one's alarm, retried at once here (DELIVERY_RETRY_SCALE=0).
    await Promise.all([advance(dies.id, 3600_000 + 60_000), advance(through.id, 3600_000 + 60_000)]);
    const after = await statsWhen(
      (s) => s.deliveries.dead === before.deliveries.dead + 1 && s.deliveries.pending === 0,
    );
    expect(after.by_day.at(-1)!.deliveries_dead).toBeGreaterThanOrEqual(1);
    const log = await json<DeliveryPage>(
      await call("GET", `/v1/counters/${through.id}/deliveries`, { headers: managed(through.mgmt) }),
    );
    expect(log.items[0]).toMatchObject({ status: "delivered", attempts: 3 });
  });

  it(
    "follow the consumer exactly: pending while a delivery waits for a retry, not once it is delivered; " +
      "dead until it gets through",
    async () => {
      const deliveryId = `evt_${crypto.randomUUID().replace(/-/g, "")}`;
      const message = (path: string): WebhookMessage => ({
        type: "webhook",
        resourceId: "r_0000000000000000000000",
        deliveryId,
        url: `${receiver}${path}`,
        method: "POST",
        headers: {},
        body: "{}",
        sealedSecret: "",
      });
      const consume = async (queue: string, body: WebhookMessage) => {
        const batch = createMessageBatch(queue, [
          {
            id: unique(),
            timestamp: new Date(),
            attempts: 1,
            body: { ...body, sealedSecret: await seal(env, newSigningSecret()) },
          },
        ]);
        const ctx = createExecutionContext();
        await worker.queue(batch, env, ctx);
        return getQueueResult(batch, ctx);
      };
      const start = await stats();
      expect((await consume("zeitvault-deliveries", message(`/down/${unique()}`))).retryMessages).toHaveLength(1);
      expect((await stats()).deliveries.pending).toBe(start.deliveries.pending + 1);
      expect((await consume("zeitvault-deliveries", message(`/ok/${unique()}`))).explicitAcks).toHaveLength(1);
      expect((await stats()).deliveries.pending).toBe(start.deliveries.pending);

      await consume("zeitvault-deliveries-dlq", message(`/down/${unique()}`));
      expect((await stats()).deliveries.dead).toBe(start.deliveries.dead + 1);
      // Sent again by hand and delivered: no longer dead.
      await consume("zeitvault-deliveries", message(`/ok/${unique()}`));
      expect((await stats()).deliveries.dead).toBe(start.deliveries.dead);
    },
  );
});

describe("the daily sweep", () => {
  it("forget open deliveries idle a day, deaths past 90 days, daily counts past 400; nothing newer", async () => {
    const now = Date.now();
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    const id = () => `evt_sweep_${unique()}`;
    const [staleOpen, freshOpen, oldDead, recentDead] = [id(), id(), id(), id()];
    await env.DB.batch([
      env.DB.prepare("INSERT INTO deliveries_open VALUES (?, 'r_x', ?, ?, 1)").bind(
        staleOpen,
        now - 2 * 86_400_000,
        now - 25 * 3600_000,
      ),
      env.DB.prepare("INSERT INTO deliveries_open VALUES (?, 'r_x', ?, ?, 1)").bind(
        freshOpen,
        now - 2 * 86_400_000,
        now - 3600_000,
      ),
      env.DB.prepare("INSERT INTO deliveries_dead VALUES (?, 'r_x', ?)").bind(oldDead, now - 91 * 86_400_000),
      env.DB.prepare("INSERT INTO deliveries_dead VALUES (?, 'r_x', ?)").bind(recentDead, now - 89 * 86_400_000),
      env.DB.prepare(
        "INSERT INTO usage_daily (day, kind, calls) VALUES (?, 'sweep-old', 1), (?, 'sweep-kept', 1)",
      ).bind(day(now - 401 * 86_400_000), day(now - 399 * 86_400_000)),
    ]);
    await sweepOperatorStats(env.DB, now);
    const ids = async (table: string) =>
      (
        await env.DB.prepare(`SELECT delivery_id FROM ${table} WHERE delivery_id LIKE 'evt_sweep_%'`).all<{
          delivery_id: string;
        }>()
      ).results.map((r) => r.delivery_id);
    expect(await ids("deliveries_open")).toEqual([freshOpen]);
    expect(await ids("deliveries_dead")).toEqual([recentDead]);
    const kinds = (
      await env.DB.prepare("SELECT kind FROM usage_daily WHERE kind LIKE 'sweep-%'").all<{ kind: string }>()
    ).results.map((r) => r.kind);
    expect(kinds).toEqual(["sweep-kept"]);
  });
});

describe("the operator token", () => {
  it("guards the figures as it guards the other operator endpoints", async () => {
    const missing = await call("GET", "/v1/admin/stats");
    expect(missing.status).toBe(401);
    expect(missing.headers.get("www-authenticate")).toBe('Bearer realm="operator"');
    expect((await call("GET", "/v1/admin/stats", { headers: { authorization: "Bearer not-the-token" } })).status).toBe(
      401,
    );
    const { token } = await buyCredits(0.25);
    const customer = await call("GET", "/v1/admin/stats", { headers: { authorization: `Bearer ${token}` } });
    expect(customer.status).toBe(403);
    expect((await json(customer)).code).toBe("forbidden");
    for (const days of ["0", "31", "x"])
      expect((await call("GET", `/v1/admin/stats?days=${days}`, { headers: ADMIN })).status).toBe(422);

    const { ADMIN_TOKEN: _unset, ...withoutToken } = env;
    for (const path of ["/v1/admin/stats", "/admin", "/admin/page.js"]) {
      expect((await buildApp().request(`${ORIGIN}${path}`, { headers: ADMIN }, withoutToken)).status, path).toBe(404);
    }
  });

  it("is HTTP Basic's password on reads, not writes; the page asks for it, served under a strict policy", async () => {
    const res = await call("GET", "/v1/admin/stats", { headers: BASIC });
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(
      (await call("GET", "/v1/admin/stats", { headers: { authorization: `Basic ${btoa("operator:wrong")}` } })).status,
    ).toBe(401);
    const write = await call("POST", `/v1/admin/public-addresses/${unique()}abcdefgh/enable`, { headers: BASIC });
    expect(write.status).toBe(401);

    const challenged = await call("GET", "/admin");
    expect(challenged.status).toBe(401);
    expect(challenged.headers.get("www-authenticate")).toBe('Basic realm="operator", charset="UTF-8"');
    const page = await call("GET", "/admin", { headers: BASIC });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const csp = page.headers.get("content-security-policy")!;
    for (const directive of [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      "connect-src 'self'",
      "frame-ancestors 'none'",
    ])
      expect(csp).toContain(directive);
    expect(csp).not.toContain("unsafe-inline");
    const html = await page.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)/);
    expect(html).not.toContain("<style");
    for (const [path, type] of [
      ["/admin/page.js", "text/javascript"],
      ["/admin/page.css", "text/css"],
    ]) {
      const asset = await call("GET", path!, { headers: BASIC });
      expect(asset.status, path).toBe(200);
      expect(asset.headers.get("content-type")).toContain(type);
    }
  });

  it("documents the figures behind the admin scheme", async () => {
    const doc = await json<OpenApiDocument>(await call("GET", "/openapi.json"));
    expect(doc.paths!["/v1/admin/stats"]!.get).toMatchObject({ operationId: "admin_stats", security: [{ admin: [] }] });
    expect(doc.paths!["/admin"]).toBeUndefined();
  });
});

describe("the request log", () => {
  it("is a JSON line per request: route pattern, kind, op, status, charge, duration; no credential", async () => {
    const { token } = await buyCredits(1);
    const { id, mgmt } = await createResource("counters", token);
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: unknown) => void lines.push(String(line)));
    const paid = await call("POST", `/v1/counters/${id}/increment`, { body: { by: 2 }, headers: managed(mgmt, token) });
    expect(paid.status).toBe(200);
    const refused = await call("GET", `/v1/counters/${id}?token=${token}`, { headers: managed(mgmt, token) });
    expect(refused.status).toBe(422);
    const deliveries = await call("GET", `/v1/counters/${id}/deliveries`, { headers: managed(mgmt) });
    expect(deliveries.status).toBe(200);
    vi.restoreAllMocks();

    const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logged).toEqual([
      {
        request_id: paid.headers.get("x-request-id"),
        method: "POST",
        route: "/v1/counters/{id}/increment",
        kind: "counters",
        operation: "counters.increment",
        status: 200,
        charged_micro: await priceOf("counters.increment"),
        duration_ms: expect.any(Number),
      },
      {
        request_id: refused.headers.get("x-request-id"),
        method: "GET",
        route: "/v1/counters/{id}",
        kind: "counters",
        operation: "counters.get",
        status: 422,
        charged_micro: 0,
        duration_ms: expect.any(Number),
      },
      // One route for every kind's log: the kind is the path's.
      {
        request_id: deliveries.headers.get("x-request-id"),
        method: "GET",
        route: "/v1/{kind}/{id}/deliveries",
        kind: "counters",
        operation: null,
        status: 200,
        charged_micro: 0,
        duration_ms: expect.any(Number),
      },
    ]);
    for (const line of lines) {
      for (const secret of [token, mgmt, id, "?"]) expect(line).not.toContain(secret);
    }
  });

  it("REQUEST_LOG=failures keeps lines for refusals and slow answers only; the counts see every call", async () => {
    const { token } = await buyCredits(1);
    const counter = await createResource("counters", token);
    const inbox = await createResource("inboxes", token);
    const quiet = { ...env, REQUEST_LOG: "failures" };
    const app = buildApp();
    const before = await stats();
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: unknown) => void lines.push(String(line)));
    const send = (path: string, init: RequestInit) => app.request(`${ORIGIN}${path}`, init, quiet);
    const paid = await send(`/v1/counters/${counter.id}/increment`, {
      method: "POST",
      headers: { ...managed(counter.mgmt, token), "content-type": "application/json" },
      body: "{}",
    });
    expect(paid.status).toBe(200);
    const refused = await send(`/v1/counters/${counter.id}/increment`, {
      method: "POST",
      headers: { ...managed(counter.mgmt, token), "content-type": "application/json" },
      body: '{"by":0}',
    });
    expect(refused.status).toBe(422);
    // A long-poll that waits out its second: a success, but slow, so it is logged.
    const slow = await send(`/v1/inboxes/${inbox.id}/items?wait_seconds=1`, {
      headers: managed(inbox.mgmt, token),
    });
    expect(slow.status).toBe(200);
    vi.restoreAllMocks();
    expect(lines.map((l) => JSON.parse(l))).toMatchObject([
      { request_id: refused.headers.get("x-request-id"), status: 422, operation: "counters.increment" },
      { request_id: slow.headers.get("x-request-id"), status: 200, operation: "inboxes.pull" },
    ]);
    expect((JSON.parse(lines[1]!) as { duration_ms: number }).duration_ms).toBeGreaterThanOrEqual(1000);
    const after = await stats();
    expect(delta(before, after, "counters")).toMatchObject({ calls: 2, refused: 1 });
  });

  it("names public addresses by their pattern and kind, and an unknown path by none", async () => {
    const { token } = await buyCredits(1);
    const { record } = await createResource("bins", token);
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: unknown) => void lines.push(String(line)));
    await (await call("POST", `${new URL(record.urls.public!).pathname}/hook?x=1`, { body: "hi" })).text();
    await (await call("GET", "/nothing/here")).text();
    vi.restoreAllMocks();
    expect(lines.map((l) => JSON.parse(l))).toMatchObject([
      { route: "/p/{public_id}/*", kind: "bins", operation: null, status: 200, charged_micro: 0 },
      { route: null, kind: null, operation: null, status: 404 },
    ]);
    expect(lines.join("\n")).not.toContain(new URL(record.urls.public!).pathname);
  });

  it("writes one Analytics Engine data point per request when the dataset is bound", async () => {
    expect(env.ANALYTICS, "wrangler.toml binds ANALYTICS").toBeDefined();
    // The local dataset drops what it is given: watch what the worker hands it.
    const written = vi.spyOn(env.ANALYTICS!, "writeDataPoint");
    const res = await buildApp().request(`${ORIGIN}/v1/prices`, {}, env);
    expect(res.status).toBe(200);
    expect(written.mock.calls).toEqual([
      [{ indexes: [""], blobs: ["/v1/prices", "", "", "2xx", "GET", "api"], doubles: [0, expect.any(Number), 1, 200] }],
    ]);
  });
});
