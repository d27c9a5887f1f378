/**
 * The public-face contract (src/kind/public-face.ts), for every kind that has a face,
 * from its route table: each declared route answers; a declared path with an undeclared
 * method is 405 with `Allow`; any other path 404; a body over the route's limit 413 with
 * nothing stored; an address the operator disabled 404 (and back when enabled); an ended
 * resource 410; and a hit reads nothing from D1.
 */
import { SELF, createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { KINDS } from "../../src/resources/registry";
import { DEFAULT_PUBLIC_BODY_BYTES, PUBLIC_METHODS, type PublicRoute } from "../../src/kind/public-face";
import { matchRoute } from "../../src/resources/public-route-match";
import { resourceFixture } from "./examples";
import { ORIGIN, buyCredits, call, createResource, json, managed, publicUrl, type Problem } from "../harness";

const ADMIN = { authorization: "Bearer test-admin-token" };
const NO_SUCH_PATH = "This address serves nothing at that path.";
const faced = KINDS.filter((k) => k.public);

/** The route's path with a sample value in each `{name}` segment. */
const concrete = (route: PublicRoute) => route.path.replace(/\{\w+\*?\}/g, "0");

async function hit(url: string, method: string, body?: string | Uint8Array): Promise<Response> {
  const headers: Record<string, string> = body === undefined ? {} : { "content-type": "application/json" };
  return SELF.fetch(url, { method, headers, body });
}

async function problem(res: Response): Promise<Partial<Problem>> {
  return res.headers.get("content-type")?.includes("json") ? json<Problem>(res) : { detail: await res.text() };
}

/** What the resource shows of itself (usage and status): a refused request must not change it. */
async function shown(id: string, mgmt: string): Promise<string> {
  const r = await json(await call("GET", `/v1/resources/${id}`, { headers: managed(mgmt) }));
  return JSON.stringify([r.usage, r.status]);
}

describe.each(faced.map((k) => [k.kind, k] as const))("public face of %s", (_name, kind) => {
  const routes = kind.public!.routes;

  async function resource() {
    const created = await resourceFixture(kind);
    expect(publicUrl(created.record)).toMatch(new RegExp(`/p/${kind.kind}_[0-9A-Za-z]{43}$`));
    return { ...created, url: publicUrl(created.record) as string };
  }

  it("answers its declared routes; other methods 405 with Allow, other paths 404", async () => {
    const r = await resource();
    for (const route of routes) {
      const method = route.methods[0]!;
      const res = await hit(
        `${r.url}${concrete(route)}`,
        method,
        method === "GET" || method === "HEAD" ? undefined : "{}",
      );
      const body = await problem(res);
      expect(res.status, `${method} ${route.path}`).not.toBe(405);
      expect(body.detail, `${method} ${route.path}`).not.toBe(NO_SUCH_PATH);
    }
    for (const path of new Set(routes.map((rt) => rt.path))) {
      // What any route takes there (a later `{path*}` route may take what this one does not).
      const there = concrete({ path } as PublicRoute);
      const allowed = PUBLIC_METHODS.filter((m) => "route" in matchRoute(routes, m, there));
      const other = PUBLIC_METHODS.find((m) => !allowed.includes(m));
      if (!other) continue; // every method is welcome there (an inbox)
      const res = await hit(`${r.url}${there}`, other);
      expect(res.status, `${other} ${path}`).toBe(405);
      expect(res.headers.get("allow")).toBe(allowed.join(", "));
      expect(res.headers.get("content-type")).toContain("application/problem+json");
    }
    // A method beyond PUBLIC_METHODS (WebDAV's) is 405 with `Allow` too, unless the route takes any method (a bin).
    for (const path of new Set(routes.map((rt) => rt.path))) {
      const there = concrete({ path } as PublicRoute);
      const match = matchRoute(routes, "PROPFIND", there);
      const res = await hit(`${r.url}${there}`, "PROPFIND");
      if ("route" in match) {
        expect(match.route.anyMethod, `PROPFIND ${path}`).toBe(true);
        expect(res.status, `PROPFIND ${path}`).not.toBe(405);
        await res.body?.cancel();
        continue;
      }
      expect(res.status, `PROPFIND ${path}`).toBe(405);
      expect(res.headers.get("allow")).toBe(
        PUBLIC_METHODS.filter((m) => "route" in matchRoute(routes, m, there)).join(", "),
      );
      await res.body?.cancel();
    }
    // A face whose route takes the rest of the path (`{path*}`) has no other paths.
    if (routes.some((rt) => /\{\w+\*\}$/.test(rt.path))) return;
    for (const path of ["/no/such/path", "/start/and/more"]) {
      const res = await hit(`${r.url}${path}`, "GET");
      expect(res.status, path).toBe(404);
    }
  });

  it("refuses a body over the route's limit with 413, storing nothing", async () => {
    const r = await resource();
    const before = await shown(r.id, r.mgmt);
    for (const route of routes) {
      const method = route.methods.find((m) => m !== "GET" && m !== "HEAD" && m !== "OPTIONS");
      if (!method) continue;
      const limit = route.maxBodyBytes ?? DEFAULT_PUBLIC_BODY_BYTES;
      const res = await hit(`${r.url}${concrete(route)}`, method, new Uint8Array(limit + 1).fill(0x61));
      expect(res.status, `${method} ${route.path}`).toBe(413);
      expect((await json(res)).max_body_bytes).toBe(limit);
    }
    expect(await shown(r.id, r.mgmt)).toBe(before);
  });

  it("answers 404 while the operator has the address disabled, 410 once the resource ended", async () => {
    const r = await resource();
    const publicId = r.url.split("/p/")[1]!;
    const first = routes.find((rt) => rt.methods.includes("GET")) ?? routes[0]!;
    const method = first.methods.includes("GET") ? "HEAD" : first.methods[0]!; // HEAD uses nothing up
    const probe = () => hit(`${r.url}${concrete(first)}`, method, method === "HEAD" ? undefined : "{}");
    const answering = (await probe()).status;
    expect(
      (
        await call("POST", `/v1/admin/public-addresses/${publicId}/disable`, {
          body: { reason: "test" },
          headers: ADMIN,
        })
      ).status,
    ).toBe(200);
    expect((await probe()).status).toBe(404);
    expect((await call("POST", `/v1/admin/public-addresses/${publicId}/enable`, { headers: ADMIN })).status).toBe(200);
    expect((await probe()).status).toBe(answering);
    await call("DELETE", `/v1/resources/${r.id}`, { headers: managed(r.mgmt) });
    expect((await probe()).status).toBe(410);
  });

  it("reads nothing from D1 to answer a hit", async () => {
    const r = await resource();
    const first = routes[0]!;
    // Every D1 statement is made by prepare (batch runs prepared ones) or exec. The operator's request counts
    // (src/operator/usage-counters.ts) are written behind the answer, not to make it: they are not the hit's.
    const statements: string[] = [];
    const counted = new Proxy(env.DB, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target) as unknown;
        if (typeof value !== "function") return value;
        if (prop !== "prepare" && prop !== "exec") return value.bind(target);
        return (sql: string) => {
          if (!sql.includes("usage_daily")) statements.push(sql);
          return value.call(target, sql);
        };
      },
    });
    const method = first.methods.includes("GET") ? "HEAD" : first.methods[0]!;
    const ctx = createExecutionContext();
    const res = await worker.fetch(
      new Request(`${r.url}${concrete(first)}`, {
        method,
        body: method === "HEAD" ? undefined : "{}",
        headers: { "content-type": "application/json" },
      }),
      { ...env, DB: counted },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(res.status).not.toBe(405);
    expect(res.status, `${method} ${concrete(first)}`).toBeLessThan(500);
    expect(statements).toEqual([]);
  });
});

describe("public addresses", () => {
  it("an id of a kind without a face, or of no resource, is 404; old 22-character ids resolve through D1", async () => {
    expect((await hit(`${ORIGIN}/p/counters_${"A".repeat(43)}`, "GET")).status).toBe(404);
    expect((await hit(`${ORIGIN}/p/secrets_${"A".repeat(43)}`, "GET")).status).toBe(404);
    expect((await hit(`${ORIGIN}/p/${"A".repeat(22)}`, "GET")).status).toBe(404);
  });

  it("HTML answers carry a strict policy, no framing and no sniffing", async () => {
    const { token } = await buyCredits(1);
    const s = await createResource("secrets", token, { value: "v" });
    const res = await hit(publicUrl(s.record), "GET");
    expect(res.headers.get("content-type")).toBe("application/json");
    const page = await SELF.fetch(publicUrl(s.record), { headers: { accept: "text/html" } });
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const csp = page.headers.get("content-security-policy")!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toMatch(/unsafe-inline|https?:/);
    const nonce = /'nonce-([^']+)'/.exec(csp)![1]!;
    expect(await page.text()).toContain(`nonce="${nonce}"`);
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    expect(page.headers.get("x-content-type-options")).toBe("nosniff");
    expect(page.headers.get("cache-control")).toBe("no-store");
  });
});
