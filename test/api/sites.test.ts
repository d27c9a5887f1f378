/**
 * sites, per issue 15 and docs/kinds.md: a zip streamed in and unpacked into R2; index.html, directory
 * indexes, pretty URLs, the SPA fallback, 404.html, content types, ETag and 304, Cache-Control;
 * HTML sandboxed; redeploys atomic with history and rollback, the retired version's bytes deleted;
 * zip slip, zip bombs, damaged and empty archives refused with 422, nothing kept, nothing charged.
 * In a real browser: test/node/place.test.ts.
 */
import { SELF, env, runInDurableObject } from "cloudflare:test";
import { strToU8, zipSync, type Zippable } from "fflate";
import { describe, expect, it } from "vitest";
import { sites } from "../../src/kinds/place/sites";
import {
  ORIGIN,
  balanceOf,
  buyCredits,
  createResource,
  expire,
  managed,
  opsOn,
  problemOf,
  publicUrl,
  r2Keys,
  stubOf,
} from "../harness";

const PNG = Uint8Array.from({ length: 300 }, (_, i) => (i * 37 + 11) % 256);

const SITE: Zippable = {
  "index.html": strToU8("<!doctype html><title>Home</title><h1>Home v1</h1>"),
  "about.html": strToU8("<h1>About</h1>"),
  "docs/index.html": strToU8("<h1>Docs</h1>"),
  "assets/app.css": strToU8("h1 { color: teal; }"),
  "assets/app.js": strToU8("console.log('hi')"),
  "img/logo.png": PNG,
  "404.html": strToU8("<h1>Not here</h1>"),
};

async function site(body: Record<string, unknown> = {}) {
  const { token } = await buyCredits(2);
  const created = await createResource("sites", token, body);
  const base = new URL(publicUrl(created.record)).pathname;
  const get = (path: string, headers: Record<string, string> = {}, method = "GET") =>
    SELF.fetch(`${ORIGIN}${base}${path}`, { method, headers, redirect: "manual" });
  const deploy = (zip: Uint8Array) =>
    SELF.fetch(`${ORIGIN}/v1/sites/${created.id}/deploy`, {
      method: "PUT",
      body: zip,
      headers: { ...managed(created.mgmt, token), "content-type": "application/zip" },
    });
  return { ...created, token, base, get, deploy, ...opsOn(sites, created.id, created.mgmt, token) };
}

const zip = (files: Zippable, level: 0 | 6 | 9 = 6) => zipSync(files, { level });

describe("sites", () => {
  it("serves index.html, pretty URLs, directory indexes, types, cache headers, 404.html; HTML sandboxed", async () => {
    const s = await site({ cache_seconds: 3600 });
    expect((await s.get("/")).status).toBe(404); // nothing deployed yet
    const deployed = await s.deploy(zip(SITE));
    expect(deployed.status, await deployed.clone().text()).toBe(200);
    expect(await deployed.json()).toMatchObject({ seq: 1, files: 7, state: "live", stripped_prefix: null });

    const root = await s.get("?ref=mail");
    expect(root.status).toBe(308);
    expect(root.headers.get("location")).toBe(`${ORIGIN}${s.base}/?ref=mail`);
    const home = await s.get("/");
    expect(home.status).toBe(200);
    expect(home.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(home.headers.get("cache-control")).toBe("no-cache");
    expect(home.headers.get("content-security-policy")).toMatch(
      /^sandbox allow-popups allow-popups-to-escape-sandbox;.*script-src 'none'/,
    );
    expect(home.headers.get("x-frame-options")).toBe("DENY");
    expect(await home.text()).toContain("Home v1");
    expect(await (await s.get("/about")).text()).toBe("<h1>About</h1>");
    expect(await (await s.get("/about.html")).text()).toBe("<h1>About</h1>");
    const docs = await s.get("/docs?tab=1");
    expect(docs.status).toBe(308);
    expect(docs.headers.get("location")).toBe(`${ORIGIN}${s.base}/docs/?tab=1`);
    expect(await (await s.get("/docs/")).text()).toBe("<h1>Docs</h1>");

    const css = await s.get("/assets/app.css");
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect(css.headers.get("cache-control")).toBe("public, max-age=3600");
    expect(css.headers.get("access-control-allow-origin")).toBe("*");
    expect((await s.get("/assets/app.js")).headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    const png = await s.get("/img/logo.png");
    expect(png.headers.get("content-type")).toBe("image/png");
    expect(new Uint8Array(await png.arrayBuffer())).toEqual(PNG);
    const part = await s.get("/img/logo.png", { range: "bytes=10-19" });
    expect(part.status).toBe(206);
    expect(new Uint8Array(await part.arrayBuffer())).toEqual(PNG.slice(10, 20));
    const head = await s.get("/about", {}, "HEAD");
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");

    const etag = css.headers.get("etag")!;
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    const revalidated = await s.get("/assets/app.css", { "if-none-match": etag });
    expect(revalidated.status).toBe(304);
    expect(revalidated.headers.get("etag")).toBe(etag);
    expect((await s.get("/assets/app.css", { "if-none-match": '"stale"' })).status).toBe(200);

    const missing = await s.get("/nope");
    expect(missing.status).toBe(404);
    expect(await missing.text()).toBe("<h1>Not here</h1>");
    expect((await s.ok("list_files", "/files?limit=3")).items.map((f) => f.path)).toEqual([
      "404.html",
      "about.html",
      "assets/app.css",
    ]);
  });

  it("a single-page app gets index.html for paths naming no file; a zipped folder is served from within", async () => {
    const s = await site({ spa_fallback: true });
    expect(
      (await s.deploy(zip({ "dist/index.html": strToU8("<h1>App</h1>"), "dist/app.js": strToU8("1") }))).status,
    ).toBe(200);
    expect((await s.ok("get", "")).live).toMatchObject({ stripped_prefix: "dist", files: 2 });
    const deep = await s.get("/dashboard/settings", { accept: "text/html" });
    expect(deep.status).toBe(200);
    expect(await deep.text()).toBe("<h1>App</h1>");
    expect((await s.get("/dashboard")).status).toBe(200); // no extension: a route, not a file
    expect((await s.get("/missing.js")).status).toBe(404);
    expect(await (await s.get("/app.js")).text()).toBe("1");
  });

  it("swaps versions atomically, keeps the previous for a rollback, deletes the one before it", async () => {
    const s = await site();
    const version = (n: number) =>
      zip({ "index.html": strToU8(`<h1>v${n}</h1>`), [`only-v${n}.txt`]: strToU8(`${n}`) });
    for (const n of [1, 2]) expect((await s.deploy(version(n))).status).toBe(200);
    expect(await (await s.get("/")).text()).toBe("<h1>v2</h1>");
    expect((await s.get("/only-v1.txt")).status).toBe(404);
    const v1Keys = (await r2Keys(s.id)).filter((k) => k.includes("/sites/"));
    expect(v1Keys).toHaveLength(4);
    expect((await s.deploy(version(3))).status).toBe(200);
    // v1 is retired: its two files are gone from R2 once the deploy committed.
    await expect.poll(async () => (await r2Keys(s.id)).filter((k) => k.includes("/sites/")).length).toBe(4);
    const deploys = await s.ok("list_deploys", "/deploys");
    expect(deploys.items.map((d) => [d.seq, d.state])).toEqual([
      [3, "live"],
      [2, "previous"],
      [1, "retired"],
    ]);

    expect(await s.ok("rollback", "/rollback")).toMatchObject({ seq: 2, state: "live" });
    expect(await (await s.get("/")).text()).toBe("<h1>v2</h1>");
    expect(await (await s.get("/only-v2.txt")).text()).toBe("2");
    expect(await s.ok("rollback", "/rollback")).toMatchObject({ seq: 3, state: "live" });
    expect(await (await s.get("/")).text()).toBe("<h1>v3</h1>");
    const exported = await SELF.fetch(`${ORIGIN}/v1/resources/${s.id}/export`, {
      headers: { authorization: `Bearer ${s.mgmt}` },
    });
    const data = ((await exported.json()) as { data: { files: { path: string; url: string }[] } }).data;
    expect(data.files.map((f) => f.path)).toEqual(["index.html", "only-v3.txt"]);
    expect(await (await SELF.fetch(data.files[1]!.url)).text()).toBe("3");

    const fresh = await site();
    expect((await fresh.refused("rollback", "/rollback")).status).toBe(409);
  });

  it("gives a file's answer again without waking the object while its version is live; writes show now", async () => {
    const s = await site({ spa_fallback: true });
    expect((await s.deploy(zip({ "index.html": strToU8("<h1>v1</h1>"), "app.css": strToU8("a{}") }))).status).toBe(200);
    const first = await s.get("/app.css");
    expect(await first.text()).toBe("a{}");
    const etag = first.headers.get("etag")!;
    const sql = (query: string, ...args: string[]) =>
      runInDurableObject(stubOf(s.id), (_o, state) => void state.storage.sql.exec(query, ...args));

    // Behind the worker's back the object loses its live version: the answer the worker learned still serves, 304s too.
    await sql("UPDATE deploys SET state = 'retired'");
    expect(await (await s.get("/app.css")).text()).toBe("a{}");
    expect((await s.get("/app.css", { "if-none-match": etag })).status).toBe(304);
    expect((await s.get("/app.css", {}, "HEAD")).headers.get("content-length")).toBe("3");
    // A request that differs (another Accept) asks the object, which answers for the address as a whole.
    expect((await s.get("/app.css", { accept: "text/html" })).status).toBe(404);
    expect((await s.get("/app.css")).status).toBe(404);
    await sql("UPDATE deploys SET state = 'live'");
    expect(await (await s.get("/app.css")).text()).toBe("a{}");

    // Another isolate's answer whose bytes were since deleted (a retired version): the object answers after all.
    const [key] = (await r2Keys(s.id)).filter((k) => k.endsWith("/1"));
    await env.BUCKET.put(`${key}-b`, "b{}");
    await sql("UPDATE files SET key = ? WHERE key = ?", `${key}-b`, key!);
    await env.BUCKET.delete(key!);
    expect(await (await s.get("/app.css")).text()).toBe("b{}");

    // A deploy through the API: the isolate that took it forgets at once; a rollback too.
    expect((await s.deploy(zip({ "index.html": strToU8("<h1>v2</h1>"), "app.css": strToU8("c{}") }))).status).toBe(200);
    expect(await (await s.get("/app.css")).text()).toBe("c{}");
    expect((await s.ok("rollback", "/rollback")).seq).toBe(1);
    expect(await (await s.get("/app.css")).text()).toBe("b{}");

    // Its end: the bytes go with it, and the address answers 410.
    await expire(s.id);
    expect((await s.get("/app.css")).status).toBe(410);
  });

  it("refuses zip slip, zip bombs, damaged, empty and non-zip bodies with 422: nothing kept or charged", async () => {
    const s = await site();
    const { balance_usd: before } = await balanceOf(s.token);
    const zeros = new Uint8Array(40_000_000);
    const bomb = zip({ "index.html": strToU8("<h1>hi</h1>"), "big.bin": zeros }, 9);
    expect(bomb.length).toBeLessThan(100_000);
    const good = zip(SITE);
    const cases: [string, Uint8Array, RegExp][] = [
      ["dot-dot", zip({ "../evil.html": strToU8("x") }), /outside the site/],
      ["nested dot-dot", zip({ "a/../../evil.html": strToU8("x") }), /outside the site/],
      ["absolute", zip({ "/etc/passwd": strToU8("x") }), /absolute/],
      ["drive", zip({ "C:/evil.html": strToU8("x") }), /absolute/],
      ["backslash", zip({ "a\\..\\evil.html": strToU8("x") }), /backslash/],
      ["bomb", bomb, /zip bomb/],
      [
        "truncated",
        good.slice(0, Math.floor(good.length / 3)),
        /ended inside a file|damaged|could not be read|not a zip/,
      ],
      ["not a zip", strToU8("just some text, not an archive"), /not a zip/],
      ["empty", zip({}), /not a zip/],
    ];
    for (const [name, body, detail] of cases) {
      const res = await s.deploy(body);
      const problem = await problemOf(res);
      expect(problem.status, name).toBe(422);
      expect(problem.detail, name).toMatch(detail);
    }
    expect(await r2Keys(s.id)).toEqual([]);
    expect((await balanceOf(s.token)).balance_usd).toBe(before);
    expect((await s.ok("get", "")).live).toBeNull();
  });

  it("refuses an archive over the published limit with 413 before reading it", async () => {
    const s = await site();
    const size = 50_000_001;
    const body = new FixedLengthStream(size);
    void new ReadableStream({ pull: (c) => c.enqueue(new Uint8Array(1 << 20)) })
      .pipeTo(body.writable)
      .catch(() => undefined);
    const res = await SELF.fetch(`${ORIGIN}/v1/sites/${s.id}/deploy`, {
      method: "PUT",
      body: body.readable,
      headers: { ...managed(s.mgmt, s.token), "content-type": "application/zip", "content-length": String(size) },
    });
    expect(res.status).toBe(413);
    expect(await r2Keys(s.id)).toEqual([]);
  });
});
