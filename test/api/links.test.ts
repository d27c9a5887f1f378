/**
 * links, per issue 15 and docs/kinds.md: a redirect (302, or 307) or one of the owner's blobs/objects
 * served at the public address; each GET a click, counted and logged (time, referrer host,
 * country), HEAD not; 410 past max_clicks (a page for a browser), counted as refused; the
 * content named by its management token (a 422 for anything else, uncharged).
 */
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { links } from "../../src/kinds/place/links";
import { ORIGIN, balanceOf, buyCredits, call, createResource, managed, opsOn, problemOf, publicUrl } from "../harness";

async function link(token: string, body: Record<string, unknown>) {
  const created = await createResource("links", token, body);
  const address = new URL(publicUrl(created.record)).pathname;
  const follow = (headers: Record<string, string> = {}, method = "GET") =>
    SELF.fetch(`${ORIGIN}${address}`, { method, headers, redirect: "manual" });
  return { ...created, address, follow, ...opsOn(links, created.id, created.mgmt, token) };
}

async function uploadBlob(id: string, mgmt: string, token: string, text: string, type = "text/plain; charset=utf-8") {
  const res = await call("PUT", `/v1/blobs/${id}/content`, {
    body: text,
    headers: { ...managed(mgmt, token), "content-type": type },
  });
  expect(res.status, await res.clone().text()).toBe(200);
}

describe("links", () => {
  it("redirects, counts, logs GETs (referrer host, country), not HEAD; 410 past max_clicks, as refused", async () => {
    const { token } = await buyCredits(1);
    const l = await link(token, { target_url: "https://example.com/report?x=1", max_clicks: 3 });
    expect(l.record.config).toEqual({
      target_url: "https://example.com/report?x=1",
      max_clicks: 3,
      redirect_status: 302,
    });
    const first = await l.follow({ referer: "https://News.Example.org/thread/1", "cf-ipcountry": "DE" });
    expect(first.status).toBe(302);
    expect(first.headers.get("location")).toBe("https://example.com/report?x=1");
    expect(first.headers.get("cache-control")).toBe("private, no-cache");
    expect((await l.follow({}, "HEAD")).status).toBe(302);
    await l.follow({ referer: "not a url", "cf-ipcountry": "somewhere" });
    await l.follow();
    const over = await l.follow({ accept: "application/json" });
    expect(over.status).toBe(410);
    expect((await problemOf(over)).code).toBe("resource_expired");
    const page = await l.follow({ accept: "text/html" });
    expect(page.status).toBe(410);
    expect(await page.text()).toContain("This link no longer works");
    expect(await l.ok("get", "")).toMatchObject({
      clicks: 3,
      max_clicks: 3,
      remaining_clicks: 0,
      exhausted: true,
      refused: 2,
      target_url: "https://example.com/report?x=1",
    });
    const log = await l.ok("list_clicks", "/clicks?limit=2");
    expect(log.items.map((c) => [c.seq, c.referrer_host, c.country])).toEqual([
      [3, null, null],
      [2, null, null],
    ]);
    const rest = await l.ok("list_clicks", `/clicks?limit=2&cursor=${log.next_cursor}`);
    expect(rest).toMatchObject({
      items: [{ seq: 1, referrer_host: "news.example.org", country: "DE" }],
      next_cursor: null,
    });
  });

  it("answers 307 when asked, without a limit; a Unicode target goes out as a header can carry it", async () => {
    const { token } = await buyCredits(1);
    const l = await link(token, { target_url: "https://bücher.example/Grüße €", redirect_status: 307 });
    for (let i = 0; i < 3; i++) {
      const res = await l.follow();
      expect(res.status).toBe(307);
      expect(res.headers.get("location")).toBe("https://xn--bcher-kva.example/Gr%C3%BC%C3%9Fe%20%E2%82%AC");
    }
    expect(await l.ok("get", "")).toMatchObject({
      clicks: 3,
      max_clicks: null,
      remaining_clicks: null,
      exhausted: false,
    });
  });

  it("serves the owner's blob as it is now (type, Range), and 410 once its content is gone", async () => {
    const { token } = await buyCredits(1);
    const blob = await createResource("blobs", token, { filename: "notes.txt" });
    await uploadBlob(blob.id, blob.mgmt, token, "first version");
    const l = await link(token, { content: blob.mgmt, max_clicks: 10 });
    expect(l.record.config).toEqual({ content_resource_id: blob.id, max_clicks: 10, redirect_status: 302 });
    expect(JSON.stringify(l.record)).not.toContain(blob.mgmt);
    const res = await l.follow();
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(res.headers.get("content-disposition")).toContain("notes.txt");
    expect(await res.text()).toBe("first version");
    const part = await l.follow({ range: "bytes=0-4" });
    expect(part.status).toBe(206);
    expect(await part.text()).toBe("first");
    await uploadBlob(blob.id, blob.mgmt, token, "second version");
    expect(await (await l.follow()).text()).toBe("second version");
    expect((await call("DELETE", `/v1/blobs/${blob.id}/content`, { headers: managed(blob.mgmt, token) })).status).toBe(
      200,
    );
    expect((await l.follow()).status).toBe(410);
    expect(await l.ok("get", "")).toMatchObject({ clicks: 3, refused: 1 });
  });

  it("serves an object too; the blob's end ends what the link serves", async () => {
    const { token } = await buyCredits(1);
    const object = await createResource("objects", token, {});
    const put = await call("PUT", `/v1/objects/${object.id}/content`, {
      body: "object bytes",
      headers: { ...managed(object.mgmt, token), "content-type": "application/octet-stream" },
    });
    expect(put.status).toBe(200);
    const l = await link(token, { content: object.mgmt });
    expect(await (await l.follow()).text()).toBe("object bytes");
    expect(
      (await call("DELETE", `/v1/resources/${object.id}`, { headers: { authorization: `Bearer ${object.mgmt}` } }))
        .status,
    ).toBe(200);
    expect((await l.follow()).status).toBe(410);
  });

  it("refuses what is not a link with 422, charging nothing", async () => {
    const { token } = await buyCredits(1);
    const counter = await createResource("counters", token, {});
    const { balance_usd: before } = await balanceOf(token);
    for (const [body, field] of [
      [{ target_url: "javascript:alert(1)" }, "target_url"],
      [{ target_url: "https://example.com/\u0000" }, "target_url"],
      [{}, "target_url"],
      [{ target_url: "https://example.com/", content: counter.mgmt }, "target_url"],
      [{ content: counter.mgmt }, "content"],
      [{ content: "zvm_notatoken" }, "content"],
      [{ target_url: "https://example.com/", redirect_status: 301 }, "redirect_status"],
      [{ target_url: "https://example.com/", max_clicks: 0 }, "max_clicks"],
    ] as const) {
      const res = await call("POST", "/v1/links", { body, headers: { authorization: `Bearer ${token}` } });
      const problem = await problemOf(res);
      expect(problem.status, JSON.stringify(body)).toBe(422);
      expect(JSON.stringify(problem.errors), JSON.stringify(body)).toContain(field);
    }
    expect((await balanceOf(token)).balance_usd).toBe(before);
  });
});
