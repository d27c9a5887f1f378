/**
 * pdf, per issue 15 and docs/kinds.md: HTML or a URL rendered by a real engine (the local one:
 * Debian's chromium behind Gotenberg's routes, scripts/engines.mjs) to a PDF that poppler's
 * pdftotext and pdfinfo read: the text, the paper size and orientation, the page count, the
 * footer template; waits for a selector; kept, listed, downloaded (signed link, Range), deleted;
 * a render that fails or times out is refused and not charged.
 */
import { SELF, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { pdf } from "../../src/kinds/place/pdf";
import { balanceOf, buyCredits, call, createResource, managed, opsOn, serveContent } from "../harness";

const read = async (tool: "pdftotext" | "pdfinfo", bytes: ArrayBuffer | Uint8Array) => {
  const res = await fetch(`${env.TEST_POPPLER_URL}/${tool}`, { method: "POST", body: bytes });
  expect(res.status, await res.clone().text()).toBe(200);
  return res.text();
};

async function renderer() {
  const { token } = await buyCredits(1);
  const created = await createResource("pdf", token, {});
  return { ...created, token, ...opsOn(pdf, created.id, created.mgmt, token) };
}

const pages = (n: number) =>
  Array.from(
    { length: n },
    (_, i) =>
      `<section style="page-break-after: always"><h1>Chapter ${i + 1}</h1><p>Body of chapter ${i + 1}.</p></section>`,
  ).join("");

describe("pdf", () => {
  it("renders HTML to a real PDF: its text, paper, orientation, pages and footer, as poppler reads them", async () => {
    const r = await renderer();
    const done = await r.ok("render", "/renders", {
      html: `<!doctype html><html><body>${pages(3)}</body></html>`,
      paper: "a4",
      landscape: true,
      footer_html:
        '<div style="font-size:9px;width:100%;text-align:center">Page <span class="pageNumber"></span> of ' +
        '<span class="totalPages"></span></div>',
      filename: "report.pdf",
    });
    expect(done).toMatchObject({
      source: "html",
      paper: "a4",
      landscape: true,
      pages: 3,
      engine: "gotenberg",
      url: null,
    });
    expect(done.render_id).toMatch(/^pdf_/);
    const file = await SELF.fetch(done.content_url);
    expect(file.headers.get("content-type")).toBe("application/pdf");
    expect(file.headers.get("content-disposition")).toContain("report.pdf");
    const bytes = new Uint8Array(await file.arrayBuffer());
    expect(bytes.length).toBe(done.size);
    const text = await read("pdftotext", bytes);
    for (const n of [1, 2, 3]) expect(text).toContain(`Chapter ${n}`);
    expect(text).toContain("Page 2 of 3");
    const info = await read("pdfinfo", bytes);
    expect(info).toMatch(/Pages:\s+3/);
    const [w, h] = /Page size:\s+([\d.]+) x ([\d.]+) pts/.exec(info)!.slice(1).map(Number);
    expect(w).toBeGreaterThan(h!); // landscape
    expect(Math.abs(h! - 595.3)).toBeLessThan(1.5); // A4's short side, 210 mm, within Chrome's rounding to CSS pixels
  });

  it("renders a URL, after waiting for a selector its script shows", async () => {
    const r = await renderer();
    const url = await serveContent(
      `pdf-${crypto.randomUUID()}`,
      `<!doctype html><body><p>Static part</p><div id="chart" style="display:none">Chart drawn</div>
<script>setTimeout(() => { document.getElementById("chart").style.display = "block"; }, 300);</script></body>`,
      { type: "text/html" },
    );
    const done = await r.ok("render", "/renders", { url, wait_for_selector: "#chart", paper: "letter" });
    expect(done).toMatchObject({ source: "url", url, pages: 1 });
    const text = await read("pdftotext", await (await SELF.fetch(done.content_url)).arrayBuffer());
    expect(text).toContain("Static part");
    expect(text).toContain("Chart drawn");
  });

  it("keeps renders: listed, fetched, downloaded through the API (Range), deleted", async () => {
    const r = await renderer();
    const first = await r.ok("render", "/renders", { html: "<p>one</p>" });
    const second = await r.ok("render", "/renders", { html: "<p>two</p>" });
    expect((await r.ok("list_renders", "/renders")).items.map((x) => x.render_id)).toEqual([
      second.render_id,
      first.render_id,
    ]);
    expect(await r.ok("get_render", `/renders/${first.render_id}`)).toEqual(first);
    const head = await call("GET", `/v1/pdf/${r.id}/renders/${first.render_id}/content`, {
      headers: { ...managed(r.mgmt, r.token), range: "bytes=0-4" },
    });
    expect(head.status).toBe(206);
    expect(await head.text()).toBe("%PDF-");
    await r.ok("delete_render", `/renders/${first.render_id}`);
    expect((await r.refused("get_render", `/renders/${first.render_id}`)).status).toBe(404);
    await expect.poll(async () => (await SELF.fetch(first.content_url)).status).toBe(404);
    expect((await r.ok("list_renders", "/renders")).items).toHaveLength(1);
  });

  it("refuses what cannot be rendered with 4xx, charging nothing", async () => {
    const r = await renderer();
    const { balance_usd: before } = await balanceOf(r.token);
    const cases: [Record<string, unknown>, number, RegExp][] = [
      [{ html: "<p>x</p>", url: "https://example.com/" }, 422, /html/],
      [{}, 422, /html/],
      [{ html: "nul\u0000" }, 422, /html/],
      [{ url: "file:///etc/passwd" }, 422, /url/],
      [{ html: "<p>x</p>", paper: "a0" }, 422, /paper/],
      [{ html: "<p>x</p>", scale: 3 }, 422, /scale/],
      [{ html: "<p>x</p>", margins: { top: -1 } }, 422, /margins/],
      [{ html: "<p>never</p>", wait_for_selector: "#never" }, 504, /engine/],
    ];
    for (const [body, status, detail] of cases) {
      const problem = await r.refused("render", "/renders", body);
      expect(problem.status, JSON.stringify(body)).toBe(status);
      expect(`${problem.detail} ${JSON.stringify(problem.errors ?? [])}`, JSON.stringify(body)).toMatch(detail);
    }
    expect((await balanceOf(r.token)).balance_usd).toBe(before);
    expect((await r.ok("list_renders", "/renders")).items).toEqual([]);
  }, 120_000);
});
