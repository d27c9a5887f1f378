/**
 * Sandboxes, per docs/api.md#sandboxes: free money that pays only inside its sandbox (and nothing
 * else pays there), a sandbox's resources ending with it, and every bad clock move refused.
 * The clock itself, kind by kind, is test/api/sandbox-clock.test.ts.
 */
import { describe, expect, it } from "vitest";
import { balanceOf, buyCredits, call, createResource, json, managed, problemOf, signPayment, usd } from "../harness";

async function sandbox(body: Record<string, unknown> = {}) {
  const res = await call("POST", "/v1/sandboxes", { body });
  const text = await res.text();
  expect(res.status, text).toBe(201);
  const made = JSON.parse(text) as { id: string; credit_token: string; expires_at: string; created_at: string };
  const auth = { authorization: `Bearer ${made.credit_token}` };
  return { view: made, id: made.id as string, token: made.credit_token as string, auth };
}

const counter = { ttl_seconds: 3600 };

describe("sandboxes", () => {
  it("are free, and answer their money, their now and their resources", async () => {
    const s = await sandbox({ label: "plan" });
    expect(s.view).toMatchObject({
      id: expect.stringMatching(/^sbx_/),
      label: "plan",
      state: "active",
      balance_usd: 10,
      resources: [],
      credit_token: expect.stringMatching(/^zv_/),
    });
    expect(Date.parse(s.view.expires_at) - Date.parse(s.view.created_at)).toBe(86_400_000);
    const created = await createResource("counters", s.token, counter);
    const view = await json<{ resources: unknown[] }>(await call("GET", `/v1/sandboxes/${s.id}`, { headers: s.auth }));
    expect(view.resources).toEqual([{ id: created.id, kind: "counters" }]);
    expect((await balanceOf(s.token)).spent_usd).toBeGreaterThan(0);
  });

  it("sandbox money pays nothing outside, and real money nothing inside", async () => {
    const s = await sandbox();
    const real = await buyCredits(1);
    const inside = await createResource("counters", s.token, counter);
    const outside = await createResource("counters", real.token, counter);
    const before = { sandbox: (await balanceOf(s.token)).balance_usd, real: (await balanceOf(real.token)).balance_usd };

    // A real resource's paid operation, paid with sandbox money: refused, nothing taken.
    const incr = (id: string, mgmt: string, credit: string) =>
      call("POST", `/v1/counters/${id}/increment`, { body: { by: 1 }, headers: managed(mgmt, credit) });
    expect((await problemOf(await incr(outside.id, outside.mgmt, s.token), 403)).detail).toMatch(/sandbox .*money/);
    // A sandbox's resource, paid with real money (a credit token, then x402): refused, nothing taken.
    expect((await problemOf(await incr(inside.id, inside.mgmt, real.token), 403)).detail).toMatch(
      /only that sandbox's credit token/,
    );
    const { header, name } = await signPayment({ priceMicro: 100 });
    const x402 = await call("POST", `/v1/counters/${inside.id}/increment`, {
      body: { by: 1 },
      headers: { authorization: `Bearer ${inside.mgmt}`, [name]: header },
    });
    expect((await problemOf(x402, 403)).detail).toMatch(/never x402/);
    // Extending either with the other side's money: refused too.
    const extend = (id: string, mgmt: string, credit: string) =>
      call("POST", `/v1/resources/${id}/extend`, { body: { ttl_seconds: 3600 }, headers: managed(mgmt, credit) });
    await problemOf(await extend(outside.id, outside.mgmt, s.token), 403);
    await problemOf(await extend(inside.id, inside.mgmt, real.token), 403);
    // Nor can real money be added to a sandbox's token.
    const topUp = await signPayment({ priceMicro: usd(1) });
    await problemOf(
      await call("POST", "/v1/credits", {
        body: { amount_usd: 1 },
        headers: { ...s.auth, [topUp.name]: topUp.header },
      }),
      403,
    );

    expect((await balanceOf(s.token)).balance_usd).toBe(before.sandbox);
    expect((await balanceOf(real.token)).balance_usd).toBe(before.real);
    // Each side's own money still pays.
    expect((await incr(inside.id, inside.mgmt, s.token)).status).toBe(200);
    expect((await incr(outside.id, outside.mgmt, real.token)).status).toBe(200);
  });

  it("takes nobody else's token", async () => {
    const s = await sandbox();
    const other = await sandbox();
    const refused = await call("GET", `/v1/sandboxes/${s.id}`, { headers: other.auth });
    expect((await problemOf(refused, 403)).detail).toContain(s.id);
    await problemOf(await call("GET", `/v1/sandboxes/${s.id}`), 401);
    await problemOf(await call("GET", "/v1/sandboxes/sbx_nope", { headers: s.auth }), 422);
  });

  it("ends with every resource in it, and its money with it", async () => {
    const s = await sandbox();
    const a = await createResource("counters", s.token, counter);
    const b = await createResource("counters", s.token, counter);
    const ended = await call("DELETE", `/v1/sandboxes/${s.id}`, { headers: s.auth });
    expect(ended.status).toBe(200);
    expect(await json(ended)).toMatchObject({ state: "ended" });
    for (const r of [a, b]) {
      const status = await call("GET", `/v1/resources/${r.id}`, { headers: managed(r.mgmt) });
      expect((await problemOf(status, 410)).code).toBe("resource_cancelled");
    }
    await problemOf(await call("GET", `/v1/sandboxes/${s.id}`, { headers: s.auth }), 410);
    await problemOf(await call("POST", "/v1/counters", { body: counter, headers: s.auth }), 401);
  });

  it("ends when its own real-time TTL passes: its resources are gone (410) and its money spends nothing", async () => {
    const s = await sandbox({ ttl_seconds: 60 });
    const r = await createResource("counters", s.token, counter);
    // Its clock far ahead of real time: the end is still real time's.
    const moved = await call("POST", `/v1/sandboxes/${s.id}/clock`, {
      body: { advance_seconds: 30 * 60 },
      headers: s.auth,
    });
    expect(moved.status).toBe(200);
    expect((await call("GET", `/v1/resources/${r.id}`, { headers: managed(r.mgmt) })).status).toBe(200);
    const endsAt = Date.parse(s.view.expires_at);
    // The sandbox's alarm ends it at expires_at: wait that out (real time), then for the end to reach the resource.
    const status = () => call("GET", `/v1/resources/${r.id}`, { headers: managed(r.mgmt) });
    let gone = await status();
    while (gone.status === 200 && Date.now() < endsAt + 30_000) {
      await new Promise((done) => setTimeout(done, Math.max(500, Math.min(5_000, endsAt - Date.now()))));
      gone = await status();
    }
    const problem = await problemOf(gone, 410);
    expect(problem.code).toBe("resource_cancelled");
    // The index keeps real time, the time the sandbox ended by (its clock ran half an hour ahead).
    const ended = Date.parse((problem as { resource?: { ended_at: string } }).resource!.ended_at);
    expect(ended).toBeGreaterThanOrEqual(endsAt);
    expect(ended).toBeLessThan(Date.now() + 1_000);
    expect([401, 410]).toContain((await call("GET", `/v1/sandboxes/${s.id}`, { headers: s.auth })).status);
    // Its money spends nothing: no new resource, no operation on the old one.
    await problemOf(await call("POST", "/v1/counters", { body: counter, headers: s.auth }), 401);
    const incr = await call("POST", `/v1/counters/${r.id}/increment`, {
      body: { by: 1 },
      headers: managed(r.mgmt, s.token),
    });
    expect(incr.status).toBeGreaterThanOrEqual(400);
    expect(incr.status).toBeLessThan(500);
  }, 120_000);

  it("refuses bad input with a problem, charging nothing", async () => {
    const s = await sandbox();
    const move = (body: unknown) => call("POST", `/v1/sandboxes/${s.id}/clock`, { body, headers: s.auth });
    const cases: [unknown, number][] = [
      [{ advance_seconds: 0 }, 422],
      [{ advance_seconds: -60 }, 422],
      [{ advance_seconds: 1.5 }, 422],
      [{ advance_seconds: 400 * 86400 }, 422],
      [{ advance_seconds: "60" }, 422],
      [{ to: "1970-01-01T00:00:00Z" }, 422],
      [{ to: new Date(Date.now() - 3_600_000).toISOString() }, 422],
      [{ to: new Date(Date.now() + 400 * 86_400_000).toISOString() }, 422],
      [{ to: "tomorrow" }, 422],
      [{ advance_seconds: 60, to: new Date(Date.now() + 86_400_000).toISOString() }, 422],
      [{}, 422],
      [{ advance_seconds: 60, speed: 2 }, 422],
      ["not json", 400],
    ];
    for (const [body, status] of cases) {
      const res =
        typeof body === "string"
          ? await call("POST", `/v1/sandboxes/${s.id}/clock`, {
              body,
              headers: { ...s.auth, "content-type": "application/json" },
            })
          : await move(body);
      await problemOf(res, status);
    }
    for (const body of [
      { label: "two\nlines" },
      { label: "bell\u0007" },
      { ttl_seconds: 0 },
      { ttl_seconds: 86401 },
      { ttl_seconds: 60.5 },
      { money: 100 },
    ]) {
      await problemOf(await call("POST", "/v1/sandboxes", { body }), 422);
    }
    const view = await json<{ now: string }>(await call("GET", `/v1/sandboxes/${s.id}`, { headers: s.auth }));
    expect(Math.abs(Date.parse(view.now) - Date.now())).toBeLessThan(5_000);
    expect((await balanceOf(s.token)).spent_usd).toBe(0);
  });
});

describe("sandboxes in the reference", () => {
  it("are in the OpenAPI document with examples, and /llms.txt names them", async () => {
    type Operation = {
      requestBody: { content: Record<string, { example: unknown }> };
      responses: Record<string, { content: Record<string, { example: { fired: unknown[] } }> }>;
    };
    const doc = await json<{ paths: Record<string, Record<string, Operation>> }>(await call("GET", "/openapi.json"));
    for (const [path, method] of [
      ["/v1/sandboxes", "post"],
      ["/v1/sandboxes/{id}", "get"],
      ["/v1/sandboxes/{id}", "delete"],
      ["/v1/sandboxes/{id}/clock", "post"],
      ["/v1/sandboxes/{id}/timeline", "get"],
    ] as const) {
      expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined();
    }
    const clock = doc.paths["/v1/sandboxes/{id}/clock"]!.post!;
    expect(clock.requestBody.content["application/json"]!.example).toEqual({ advance_seconds: 259200 });
    expect(clock.responses["200"]!.content["application/json"]!.example.fired.length).toBeGreaterThan(0);
    expect(await (await call("GET", "/llms.txt")).text()).toContain("/v1/sandboxes");
  });
});
