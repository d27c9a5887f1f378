/**
 * Ask (feature requests, abuse reports) and the operator endpoints, through HTTP:
 * what is stored in D1 (and what never is), validation, admin auth, pagination,
 * disabling public addresses.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { z } from "@hono/zod-openapi";
import { buildApp } from "../../src/app";
import type { abuseReportPage, featureRequestPage, received } from "../../src/ask/schema";
import { sweepAskSalts } from "../../src/ask";
import { publicIdOf, PUBLIC_ID_PATTERN } from "../../src/resources/public-addresses";
import { issueCreditToken } from "../../src/auth/tokens";
import { ORIGIN, call, json, type OpenApiDocument, type Problem } from "../harness";

/** What a feature request or an abuse report answers (the AskReceipt schema). */
type AskReceipt = z.infer<typeof received>;

const ADMIN = { authorization: "Bearer test-admin-token" };
const IP = "203.0.113.77";
const publicId = () => crypto.randomUUID().replace(/-/g, "");

async function dumpAskTables(): Promise<string> {
  let dump = "";
  for (const table of ["feature_requests", "abuse_reports", "disabled_public_addresses", "ask_salts"]) {
    dump += JSON.stringify((await env.DB.prepare(`SELECT * FROM ${table}`).all()).results);
  }
  return dump;
}

async function fieldErrors(res: Response): Promise<string[]> {
  expect(res.status).toBe(422);
  expect(res.headers.get("content-type")).toBe("application/problem+json");
  const body = await json<Problem>(res);
  expect(body.code).toBe("validation_failed");
  return body.errors!.map((e: { path: string }) => e.path);
}

describe("feature requests", () => {
  it("are stored without credentials, with the IP only as a salted hash", async () => {
    const token = issueCreditToken().token;
    const res = await call("POST", "/v1/feature-requests", {
      body: {
        title: "  Vaults with CAS  ",
        body: `My token ${token} should not end up here.`,
        contact: "agent@example.com",
        kind: "vaults",
      },
      headers: { "cf-connecting-ip": IP, authorization: `Bearer ${token}` },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const receipt = await json<AskReceipt>(res);
    expect(receipt).toEqual({ id: expect.stringMatching(/^fr_/), created_at: expect.any(String), status: "received" });
    expect(Date.parse(receipt.created_at)).toBeGreaterThan(Date.now() - 60_000);

    const row = await env.DB.prepare("SELECT * FROM feature_requests WHERE id = ?")
      .bind(receipt.id)
      .first<Record<string, unknown>>();
    expect(row).toMatchObject({
      title: "Vaults with CAS",
      contact: "agent@example.com",
      kind: "vaults",
      request_id: res.headers.get("x-request-id"),
    });
    expect(row?.body).toBe("My token [redacted credential] should not end up here.");
    expect(row?.client_hash).toMatch(/^[0-9a-f]{64}$/);

    const dump = await dumpAskTables();
    expect(dump).not.toContain(IP);
    expect(dump).not.toContain(token.slice(3, 40));
  });

  it("hash one client alike within a day, and two clients apart", async () => {
    const send = async (ip: string) => {
      const { id } = await json(
        await call("POST", "/v1/feature-requests", { body: { title: "t" }, headers: { "cf-connecting-ip": ip } }),
      );
      return (
        await env.DB.prepare("SELECT client_hash FROM feature_requests WHERE id = ?")
          .bind(id)
          .first<{ client_hash: string }>()
      )?.client_hash;
    };
    const today = () => new Date().toISOString().slice(0, 10);
    // The salt changes at midnight UTC: a run that straddles it tries again on the new day.
    for (let attempt = 0; attempt < 2; attempt++) {
      const day = today();
      const [a1, a2, b] = [await send("198.51.100.1"), await send("198.51.100.1"), await send("198.51.100.2")];
      if (today() !== day) continue;
      expect(a1).toBe(a2);
      expect(b).not.toBe(a1);
      // One IPv6 subscriber holds a /64: it is one client, whichever address it sends from.
      expect(await send("2001:db8:1:2::1")).toBe(await send("2001:db8:1:2:ffff::9"));
      const salts = await env.DB.prepare("SELECT day FROM ask_salts").all<{ day: string }>();
      expect(salts.results.map((s) => s.day)).toEqual([day]);
      return;
    }
    throw new Error("the day changed twice during one test");
  });

  it("leave no salt of a past day behind after the daily sweep", async () => {
    await env.DB.prepare("INSERT INTO ask_salts (day, salt) VALUES ('2020-01-01', 'old')").run();
    await sweepAskSalts(env.DB, Date.now());
    expect(await env.DB.prepare("SELECT * FROM ask_salts WHERE day = '2020-01-01'").first()).toBeNull();
  });

  it("refuse bad input with 422 and the field paths", async () => {
    expect(await fieldErrors(await call("POST", "/v1/feature-requests", { body: {} }))).toEqual(["title"]);
    expect(await fieldErrors(await call("POST", "/v1/feature-requests", { body: { title: "   " } }))).toEqual([
      "title",
    ]);
    expect(await fieldErrors(await call("POST", "/v1/feature-requests", { body: { title: "x".repeat(201) } }))).toEqual(
      ["title"],
    );
    const many = await call("POST", "/v1/feature-requests", {
      body: { title: "ok", body: "x".repeat(10_001), contact: "c".repeat(201), kind: "Not A Kind" },
    });
    expect((await fieldErrors(many)).sort()).toEqual(["body", "contact", "kind"]);
    expect((await call("POST", "/v1/feature-requests", { body: "{" })).status).toBe(400);
  });
});

describe("abuse reports", () => {
  it("record the public id of a reported public address, and drop userinfo from the URL", async () => {
    const id = publicId();
    const res = await call("POST", "/v1/abuse-reports", {
      body: {
        url: `https://someone:secret@zeitvault.test/p/${id}/login.html?x=1`,
        reason: "phishing",
        details: "fake bank login",
      },
      headers: { "cf-connecting-ip": IP },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const receipt = await json(res);
    expect(receipt).toEqual({ id: expect.stringMatching(/^ar_/), created_at: expect.any(String), status: "received" });
    const row = await env.DB.prepare("SELECT * FROM abuse_reports WHERE id = ?")
      .bind(receipt.id)
      .first<Record<string, unknown>>();
    expect(row).toMatchObject({
      public_id: id,
      reason: "phishing",
      details: "fake bank login",
      contact: null,
      url: `${ORIGIN}/p/${id}/login.html?x=1`,
    });
    expect(await dumpAskTables()).not.toContain(IP);
  });

  it("find the public id below a public base that has a path", () => {
    const base = "https://pub.example/zv/";
    expect(publicIdOf(new URL("https://pub.example/zv/p/abcdefgh12/a/b"), base, PUBLIC_ID_PATTERN)).toBe("abcdefgh12");
    expect(publicIdOf(new URL("https://pub.example/p/abcdefgh12"), base, PUBLIC_ID_PATTERN)).toBeNull();
    expect(publicIdOf(new URL("https://other.example/zv/p/abcdefgh12"), base, PUBLIC_ID_PATTERN)).toBeNull();
    expect(publicIdOf(new URL("https://pub.example/zv/p/a%2Fb"), base, PUBLIC_ID_PATTERN)).toBeNull();
  });

  it("accept other addresses of this service without a public id", async () => {
    const res = await call("POST", "/v1/abuse-reports", { body: { url: `${ORIGIN}/v1/prices`, reason: "other" } });
    expect(res.status).toBe(201);
    const row = await env.DB.prepare("SELECT public_id FROM abuse_reports WHERE id = ?")
      .bind((await json(res)).id)
      .first();
    expect(row).toEqual({ public_id: null });
  });

  it("refuse bad input with 422 and the field paths", async () => {
    expect((await fieldErrors(await call("POST", "/v1/abuse-reports", { body: {} }))).sort()).toEqual([
      "reason",
      "url",
    ]);
    expect(
      await fieldErrors(await call("POST", "/v1/abuse-reports", { body: { url: "not a url", reason: "spam" } })),
    ).toEqual(["url"]);
    expect(
      await fieldErrors(
        await call("POST", "/v1/abuse-reports", { body: { url: `${ORIGIN}/p/abcdefgh`, reason: "boring" } }),
      ),
    ).toEqual(["reason"]);
    const foreign = await call("POST", "/v1/abuse-reports", {
      body: { url: "https://elsewhere.example/p/abcdefgh", reason: "spam" },
    });
    expect(await fieldErrors(foreign)).toEqual(["url"]);
    const lookalike = await call("POST", "/v1/abuse-reports", {
      body: { url: "https://zeitvault.test.evil.example/p/abcdefgh", reason: "spam" },
    });
    expect(await fieldErrors(lookalike)).toEqual(["url"]);
  });
});

describe("operator endpoints", () => {
  it("do not exist while ADMIN_TOKEN is unset", async () => {
    const { ADMIN_TOKEN: _unset, ...withoutToken } = env;
    for (const [method, path] of [
      ["GET", "/v1/admin/feature-requests"],
      ["GET", "/v1/admin/abuse-reports"],
      ["POST", `/v1/admin/public-addresses/${publicId()}/enable`],
    ] as const) {
      const res = await buildApp().request(`${ORIGIN}${path}`, { method, headers: ADMIN }, withoutToken);
      expect(res.status, path).toBe(404);
      expect((await json(res)).code).toBe("not_found");
    }
    // The same app and env with the token set answers: the 404 above came from the missing token alone.
    const res = await buildApp().request(
      `${ORIGIN}/v1/admin/feature-requests`,
      { headers: ADMIN },
      { ...withoutToken, ADMIN_TOKEN: "test-admin-token" },
    );
    expect(res.status).toBe(200);
  });

  it("refuse a missing or unknown token with 401, a customer credential with 403", async () => {
    const missing = await call("GET", "/v1/admin/feature-requests");
    expect(missing.status).toBe(401);
    expect(missing.headers.get("www-authenticate")).toBe('Bearer realm="operator"');
    const wrong = await call("GET", "/v1/admin/feature-requests", {
      headers: { authorization: "Bearer test-admin-tokeN" },
    });
    expect(wrong.status).toBe(401);
    expect((await json(wrong)).code).toBe("unauthorized");
    expect(
      (await call("GET", "/v1/admin/abuse-reports", { headers: { authorization: "Basic dGVzdA==" } })).status,
    ).toBe(401);
    const customer = await call("POST", `/v1/admin/public-addresses/${publicId()}/disable`, {
      body: { reason: "x" },
      headers: { authorization: `Bearer ${issueCreditToken().token}` },
    });
    expect(customer.status).toBe(403);
    expect((await json(customer)).code).toBe("forbidden");
  });

  it("list feature requests newest first, page by page", async () => {
    const tag = `page-${publicId()}`;
    const created: string[] = [];
    for (let i = 0; i < 5; i++)
      created.push(
        (await json<AskReceipt>(await call("POST", "/v1/feature-requests", { body: { title: `${tag} ${i}` } }))).id,
      );

    const seen: Array<{ id: string; created_at: string; title: string }> = [];
    let cursor: string | null = null;
    do {
      const res = await call("GET", `/v1/admin/feature-requests?limit=2${cursor ? `&cursor=${cursor}` : ""}`, {
        headers: ADMIN,
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("cache-control")).toBe("no-store");
      const page = await json<z.infer<typeof featureRequestPage>>(res);
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items);
      cursor = page.next_cursor;
    } while (cursor);

    expect(new Set(seen.map((s) => s.id)).size).toBe(seen.length);
    const ours = seen.filter((s) => s.title.startsWith(tag));
    expect(ours.map((s) => s.id).sort()).toEqual([...created].sort());
    const times = seen.map((s) => Date.parse(s.created_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(ours[0]).toMatchObject({ status: "received", body: null, contact: null, kind: null, client_hash: null });
  });

  it("refuse a bad limit or cursor with 422", async () => {
    for (const query of ["limit=0", "limit=101", "limit=two"]) {
      expect(await fieldErrors(await call("GET", `/v1/admin/abuse-reports?${query}`, { headers: ADMIN }))).toEqual([
        "limit",
      ]);
    }
    expect(
      await fieldErrors(await call("GET", "/v1/admin/feature-requests?cursor=nonsense", { headers: ADMIN })),
    ).toEqual(["cursor"]);
  });

  it("disable/enable a public address: seen in its state and reports (router's refusal: deadman.test.ts)", async () => {
    const id = publicId();
    const report = await json(
      await call("POST", "/v1/abuse-reports", { body: { url: `${ORIGIN}/p/${id}`, reason: "malware" } }),
    );
    const stateOf = async (publicId: string) =>
      (await json(await call("GET", `/v1/admin/public-addresses/${publicId}`, { headers: ADMIN }))).disabled;
    expect(await stateOf(id)).toBe(false);

    const disabled = await call("POST", `/v1/admin/public-addresses/${id}/disable`, {
      body: { reason: `report ${report.id}` },
      headers: ADMIN,
    });
    expect(disabled.status).toBe(200);
    const state = await json(disabled);
    expect(state).toEqual({
      public_id: id,
      url: `${ORIGIN}/p/${id}`,
      disabled: true,
      reason: `report ${report.id}`,
      disabled_at: expect.any(String),
    });
    expect(await stateOf(id)).toBe(true);
    expect(await stateOf(publicId())).toBe(false);

    const again = await json(
      await call("POST", `/v1/admin/public-addresses/${id}/disable`, { body: { reason: "confirmed" }, headers: ADMIN }),
    );
    expect(again).toMatchObject({ disabled: true, reason: "confirmed", disabled_at: state.disabled_at });
    expect(await json(await call("GET", `/v1/admin/public-addresses/${id}`, { headers: ADMIN }))).toEqual(again);

    const reports = await json<z.infer<typeof abuseReportPage>>(
      await call("GET", "/v1/admin/abuse-reports?limit=100", { headers: ADMIN }),
    );
    expect(reports.items.find((r: { id: string }) => r.id === report.id)).toMatchObject({
      public_id: id,
      reason: "malware",
      public_address_disabled: true,
    });

    const enabled = await call("POST", `/v1/admin/public-addresses/${id}/enable`, { headers: ADMIN });
    expect(await json(enabled)).toEqual({
      public_id: id,
      url: `${ORIGIN}/p/${id}`,
      disabled: false,
      reason: null,
      disabled_at: null,
    });
    expect(await stateOf(id)).toBe(false);
  });

  it("refuse a disable without a reason or with a malformed public id", async () => {
    expect(
      await fieldErrors(
        await call("POST", `/v1/admin/public-addresses/${publicId()}/disable`, { body: {}, headers: ADMIN }),
      ),
    ).toEqual(["reason"]);
    expect(await fieldErrors(await call("POST", "/v1/admin/public-addresses/abc/enable", { headers: ADMIN }))).toEqual([
      "public_id",
    ]);
  });
});

describe("OpenAPI", () => {
  it("documents Ask as free and the operator endpoints behind the admin scheme", async () => {
    const doc = await json<OpenApiDocument>(await call("GET", "/openapi.json"));
    for (const path of ["/v1/feature-requests", "/v1/abuse-reports"]) {
      expect(doc.paths![path]!.post).toMatchObject({ tags: ["Ask"], security: [] });
    }
    expect(doc.paths!["/v1/admin/feature-requests"]!.get!.security).toEqual([{ admin: [] }]);
    expect(doc.paths!["/v1/admin/public-addresses/{public_id}/disable"]!.post!.security).toEqual([{ admin: [] }]);
    expect(doc.components!.securitySchemes!.admin).toMatchObject({ type: "http", scheme: "bearer" });
  });
});
