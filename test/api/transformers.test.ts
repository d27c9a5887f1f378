/**
 * transformers, per docs/kinds.md and issue 13: JSON at the public address reshaped by a JSONata
 * expression (and headers derived by another) and forwarded to a real local receiver through the
 * delivery pipeline; `test` runs the expressions without sending; a failing expression or a body
 * that is not JSON sends nothing, is logged and answered 422; a null result skips; evaluation is
 * bounded (a loop ends with an error, a backtracking regex is refused); bad input uncharged.
 */
import { SELF, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { transformers } from "../../src/kinds/address/transformers";
import {
  balanceOf,
  buyCredits,
  call,
  createResource,
  opsOn,
  problemOf,
  publicUrl,
  received,
  verifierOf,
  type Received,
} from "../harness";

const receiver = env.TEST_RECEIVER_URL;
const unique = () => crypto.randomUUID().slice(0, 8);

async function transformer(body: Record<string, unknown>) {
  const { token } = await buyCredits(1);
  const created = await createResource("transformers", token, body);
  return { ...created, token, url: publicUrl(created.record), ...opsOn(transformers, created.id, created.mgmt, token) };
}

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  SELF.fetch(url, {
    method: "POST",
    body: typeof body === "string" ? body : JSON.stringify(body),
    headers: { "content-type": "application/json", ...headers },
  });

describe("transformers", () => {
  it("reshapes the body and headers and forwards them, signed; the log shows each request", async () => {
    const name = unique();
    const t = await transformer({
      target_url: `${receiver}/ok/${name}`,
      headers: { "x-static": "1" },
      expression:
        '{ "text": "Order " & data.order_id & " paid: " & $string(data.amount) & " " & ' +
        '$uppercase(data.currency), "via": $path, "tenant": $headers.`x-tenant` }',
      headers_expression: '{ "x-order": $string(data.order_id) }',
    });
    const res = await post(
      `${t.url}/shop`,
      { data: { order_id: "A-1", amount: 42, currency: "eur" } },
      { "x-tenant": "acme" },
    );
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { seq: number; forwarded: boolean; delivery_id: string };
    expect(answer).toMatchObject({ seq: 1, forwarded: true });
    const [hit] = await received(name, 1);
    expect(verifierOf(t.record).verify(hit!.body, hit!.headers)).toEqual({
      text: "Order A-1 paid: 42 EUR",
      via: "/shop",
      tenant: "acme",
    });
    expect(hit!.headers).toMatchObject({
      "x-order": "A-1",
      "x-static": "1",
      "x-tenant": "acme",
      "content-type": "application/json",
      "webhook-id": answer.delivery_id,
    });

    // A null result skips; a failing expression or a body that is not JSON sends nothing and is logged.
    await t.ok("set_expressions", "/expressions", {
      expression: 'type = "ping" ? null : (type = "boom" ? $error("cannot route " & type) : { "event": type })',
      headers_expression: null,
    });
    expect(await (await post(t.url, { type: "ping" })).json()).toEqual({ received: true, seq: 2, forwarded: false });
    const boom = await problemOf(await post(t.url, { type: "boom" }), 422);
    expect(boom.detail).toContain("cannot route boom");
    await problemOf(await post(t.url, "not json"), 422);
    expect(await (await post(t.url, { type: "order.paid" })).json()).toMatchObject({ seq: 5, forwarded: true });
    const hits = await received(name, 2);
    expect(JSON.parse(hits[1]!.body)).toEqual({ event: "order.paid" });

    const log = await t.ok("log", "/log");
    expect(log.items.map((e) => e.outcome)).toEqual(["forwarded", "skipped", "failed", "failed", "forwarded"]);
    expect(log.items[2]!.error).toContain("cannot route boom");
    expect(log.items[3]!.error).toContain("not JSON");
    expect(await t.ok("info", "")).toMatchObject({ forwarded: 2, skipped: 1, failed: 2 });
    await new Promise((r) => setTimeout(r, 300));
    expect(((await (await fetch(`${receiver}/_log/${name}`)).json()) as Received[]).length).toBe(2);
  });

  it("test runs the expressions on a sample without sending, bounded", async () => {
    const name = unique();
    const t = await transformer({ target_url: `${receiver}/ok/${name}`, expression: "{ 'n': n * 2 }" });
    expect(await t.ok("test", "/test", { sample: { n: 21 } })).toEqual({
      ok: true,
      body: { n: 42 },
      headers: {},
      error: null,
    });
    expect(
      await t.ok("test", "/test", {
        sample: { n: 1 },
        expression: "$sum([1..n])",
        headers_expression: "{ 'x-n': $string(n) }",
      }),
    ).toEqual({ ok: true, body: 1, headers: { "x-n": "1" }, error: null });
    // A loop (a tail call is a loop in JSONata) ends with an error, not a hang.
    const loop = await t.ok("test", "/test", { sample: {}, expression: "($f := function($n){ $f($n + 1) }; $f(0))" });
    expect(loop).toMatchObject({ ok: false, error: expect.stringContaining("steps") });
    const huge = await t.ok("test", "/test", { sample: {}, expression: "[1..10000000]" });
    expect(huge.ok).toBe(false);
    const badHeader = await t.ok("test", "/test", {
      sample: {},
      headers_expression: "{ 'webhook-signature': 'forged' }",
    });
    expect(badHeader).toMatchObject({ ok: false, error: expect.stringContaining("webhook-signature") });
    await new Promise((r) => setTimeout(r, 200));
    expect(((await (await fetch(`${receiver}/_log/${name}`)).json()) as Received[]).length).toBe(0);
  });

  it("refuses bad expressions and targets with 422, uncharged", async () => {
    const { token } = await buyCredits(1);
    const before = (await balanceOf(token)).balance_usd;
    const target = `${receiver}/ok/${unique()}`;
    for (const body of [
      { target_url: target, expression: "foo.(bar" },
      { target_url: target, expression: "$match(a, /(x+)*y/)" },
      { target_url: target, expression: "$match(a, /(a)\\1/)" },
      { target_url: target, expression: "x".repeat(4097) },
      { target_url: target, expression: "a", headers_expression: "{" },
      { target_url: "ftp://example.com/", expression: "a" },
      { target_url: target },
      { target_url: target, expression: "a", unknown: 1 },
    ]) {
      const res = await call("POST", "/v1/transformers", { body, headers: { authorization: `Bearer ${token}` } });
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(422);
    }
    expect((await balanceOf(token)).balance_usd).toBe(before);
    const t = await transformer({ target_url: target, expression: "a" });
    const after = (await balanceOf(t.token)).balance_usd;
    expect(await t.reply("PUT", "/expressions", { expression: "(" })).toMatchObject({ status: 422 });
    expect(await t.reply("POST", "/test", { sample: {}, expression: "/(a+)+/" })).toMatchObject({ status: 422 });
    expect((await balanceOf(t.token)).balance_usd).toBe(after);
  });
});
