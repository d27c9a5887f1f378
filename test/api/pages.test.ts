/**
 * pages, per issue 15 and docs/kinds.md: Markdown rendered safely, HTML served as written and
 * sandboxed (scripts only when opted in), ETag / Last-Modified / 304, updated in place, views
 * counted (HEAD not), title and description for link previews, bad input refused uncharged.
 * In a real browser (scripts blocked or run, the text shown): test/node/pages.test.ts.
 */
import { describe, expect, it } from "vitest";
import { pages } from "../../src/kinds/place/pages";
import { balanceOf, buyCredits, call, createResource, opsOn, publicUrl } from "../harness";

async function page(body: Record<string, unknown>) {
  const { token } = await buyCredits(1);
  const created = await createResource("pages", token, body);
  const address = new URL(publicUrl(created.record)).pathname;
  return {
    ...created,
    token,
    address,
    view: (headers: Record<string, string> = {}, method = "GET") => call(method, address, { headers }),
    ...opsOn(pages, created.id, created.mgmt, token),
  };
}

const MARKDOWN =
  "# Weekly numbers\n\nSales rose **12%**.\n\n<script>alert(1)</script>\n\n[docs](https://example.com/docs)" +
  " [bad](javascript:alert(1))\n";

describe("pages", () => {
  it("renders Markdown safely, with its title, preview tags, headers of a revalidated, sandboxed page", async () => {
    const p = await page({ content: MARKDOWN, description: "Numbers for the week." });
    expect(p.record.config).toEqual({
      format: "markdown",
      description: "Numbers for the week.",
      scripts: false,
      indexable: false,
    });
    const res = await p.view();
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("etag")).toMatch(/^"[0-9a-f]{32}"$/);
    expect(Date.parse(res.headers.get("last-modified")!)).toBeGreaterThan(0);
    expect(res.headers.get("cache-control")).toBe("no-cache");
    expect(res.headers.get("x-robots-tag")).toBe("noindex");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    const csp = res.headers.get("content-security-policy")!;
    expect(csp).toMatch(/^sandbox allow-popups allow-popups-to-escape-sandbox;/);
    expect(csp).toContain("script-src 'none'");
    expect(csp).not.toMatch(/https?:/);
    const html = await res.text();
    expect(html).toContain("<title>Weekly numbers</title>");
    expect(html).toContain('<meta name="description" content="Numbers for the week.">');
    expect(html).toContain('<meta property="og:title" content="Weekly numbers">');
    expect(html).toContain("<strong>12%</strong>");
    expect(html).not.toContain("<script>");
    expect(html).toContain("&#60;script&#62;alert(1)&#60;/script&#62;");
    expect(html).toContain('<a href="https://example.com/docs"');
    expect(html).not.toContain("javascript:");
  });

  it("serves HTML as written, its title and description put in its head; scripts run only when opted in", async () => {
    const source =
      "<!doctype html><html><head><meta charset=utf-8><title>Old</title></head><body><p id=x>{{nonce}} " +
      "static</p><script>document.getElementById('x').textContent='ran'</script></body></html>";
    const off = await page({ format: "html", content: source, title: "New & shiny", indexable: true });
    const res = await off.view();
    const html = await res.text();
    expect(html).toContain("<p id=x>{{nonce}} static</p>");
    expect(html).toContain("<title>New &#38; shiny</title>");
    expect(html).not.toContain("<title>Old</title>");
    expect(html.indexOf("<title>")).toBeGreaterThan(html.indexOf("<head>"));
    expect(res.headers.get("content-security-policy")).toContain("script-src 'none'");
    expect(res.headers.get("content-security-policy")).not.toContain("allow-scripts");
    expect(res.headers.get("x-robots-tag")).toBeNull();

    const on = await page({ format: "html", content: source, scripts: true });
    const csp = (await on.view()).headers.get("content-security-policy")!;
    expect(csp).toMatch(/^sandbox [^;]*allow-scripts/);
    expect(csp).toContain("script-src 'self' 'unsafe-inline'");
  });

  it("answers a conditional GET with 304 (ETag, weak ETag, *, Last-Modified); GET is a view, HEAD not", async () => {
    const p = await page({ content: "# Hello" });
    const first = await p.view();
    const etag = first.headers.get("etag")!;
    const modified = first.headers.get("last-modified")!;
    for (const headers of [
      { "if-none-match": etag },
      { "if-none-match": `"nope", W/${etag}` },
      { "if-none-match": "*" },
      { "if-modified-since": modified },
    ] as Record<string, string>[]) {
      const res = await p.view(headers);
      expect(res.status, JSON.stringify(headers)).toBe(304);
      expect(await res.text()).toBe("");
      expect(res.headers.get("etag")).toBe(etag);
    }
    // If-None-Match decides alone
    expect((await p.view({ "if-none-match": '"other"', "if-modified-since": modified })).status).toBe(200);
    expect((await p.view({ "if-modified-since": "Thu, 01 Jan 1970 00:00:00 GMT" })).status).toBe(200);
    expect((await p.view({ "if-modified-since": "yesterday-ish" })).status).toBe(200);
    const head = await p.view({}, "HEAD");
    expect(head.status).toBe(200);
    expect(head.headers.get("etag")).toBe(etag);
    const info = await p.ok("get", "");
    expect(info).toMatchObject({ views: 8, version: 1, etag, format: "markdown", title: null });
    expect(info.last_viewed_at).toEqual(expect.any(String));
    expect(info.served_bytes).toBeGreaterThan(info.bytes);
  });

  it("updates in place: same address, new ETag, version; old ETag stops matching; null removes a title", async () => {
    const p = await page({ content: "# One", title: "First" });
    const before = await p.view();
    const etag = before.headers.get("etag")!;
    const updated = await p.ok("update", "", { content: "# Two\n\nchanged", title: null, description: "Second." });
    expect(updated).toMatchObject({ version: 2, title: null, description: "Second." });
    expect(updated.etag).not.toBe(etag);
    const after = await p.view({ "if-none-match": etag });
    expect(after.status).toBe(200);
    const html = await after.text();
    expect(html).toContain("<title>Two</title>");
    expect(html).toContain("changed");
    expect(await p.ok("get_content", "/content")).toEqual({
      format: "markdown",
      content: "# Two\n\nchanged",
      version: 2,
    });
    // Settings alone change the answer's headers, and so its ETag.
    const indexable = await p.ok("update", "", { indexable: true });
    expect(indexable.etag).not.toBe(updated.etag);
    expect((await p.view()).headers.get("x-robots-tag")).toBeNull();
  });

  it("refuses bad content and settings with 422, charging nothing", async () => {
    const p = await page({ content: "ok" });
    const { balance_usd: before } = await balanceOf(p.token);
    for (const [body, field] of [
      [{ content: "nul\u0000here" }, "content"],
      [{ content: "x".repeat(256 * 1024 + 1) }, "content"],
      [{}, "content"],
      [{ title: "two\nlines" }, "title"],
      [{ format: "pdf" }, "format"],
      [{ content: "ok", surprise: 1 }, ""],
    ] as const) {
      const problem = await p.refused("update", "", body);
      expect(problem.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      if (field) expect(JSON.stringify(problem.errors)).toContain(field);
    }
    expect((await balanceOf(p.token)).balance_usd).toBe(before);
    const { token } = await buyCredits(1);
    const res = await call("POST", "/v1/pages", {
      body: { content: "<p>\u0007</p>", format: "html" },
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(422);
  });

  it("is gone with its resource: a browser gets a page, a script problem+json", async () => {
    const p = await page({ content: "# Bye" });
    expect(
      (await call("DELETE", `/v1/resources/${p.id}`, { headers: { authorization: `Bearer ${p.mgmt}` } })).status,
    ).toBe(200);
    const browser = await p.view({ accept: "text/html" });
    expect(browser.status).toBe(410);
    expect(await browser.text()).toContain("This page is no longer here");
    expect((await p.view()).headers.get("content-type")).toContain("application/problem+json");
  });
});
