/**
 * ocr, per issue 15 and docs/kinds.md: pictures of known text, made here (HTML printed by the local PDF
 * engine, then rasterized by poppler as PNG, JPEG and TIFF), read back by the real engine
 * (tesseract, scripts/engines.mjs): the words, their boxes and confidences, per page for a PDF; a
 * file fetched from a URL; a language not installed, a file that is no image, an empty one: 4xx,
 * nothing charged.
 */
import { SELF, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ocr } from "../../src/kinds/utilities/ocr";
import { ORIGIN, balanceOf, buyCredits, createResource, managed, opsOn, problemOf, serveContent } from "../harness";

const LINES = ["Invoice 4711", "Total due 128 EUR", "Thank you for your order"];

/** A PDF of `pages`, each a page of big text, rendered by the pdf kind through the local engine. */
async function printed(token: string, pages: string[][]): Promise<Uint8Array> {
  const maker = await createResource("pdf", token, {});
  const html = pages
    .map(
      (lines) =>
        `<section style="page-break-after: always; font: 32px sans-serif">` +
        `${lines.map((l) => `<p>${l}</p>`).join("")}</section>`,
    )
    .join("");
  const render = await SELF.fetch(`${ORIGIN}/v1/pdf/${maker.id}/renders`, {
    method: "POST",
    body: JSON.stringify({ html }),
    headers: { ...managed(maker.mgmt, token), "content-type": "application/json" },
  });
  expect(render.status, await render.clone().text()).toBe(200);
  const { content_url } = (await render.json()) as { content_url: string };
  return new Uint8Array(await (await SELF.fetch(content_url)).arrayBuffer());
}

async function image(pdf: Uint8Array, format: "png" | "jpeg" | "tiff"): Promise<Uint8Array> {
  const res = await fetch(`${env.TEST_POPPLER_URL}/pdftoppm?format=${format}`, { method: "POST", body: pdf });
  expect(res.status).toBe(200);
  return new Uint8Array(await res.arrayBuffer());
}

async function reader(languages?: string[]) {
  const { token } = await buyCredits(1);
  const created = await createResource("ocr", token, languages ? { languages } : {});
  const read = (bytes: Uint8Array, type = "application/octet-stream") =>
    SELF.fetch(`${ORIGIN}/v1/ocr/${created.id}/recognitions`, {
      method: "PUT",
      body: bytes,
      headers: { ...managed(created.mgmt, token), "content-type": type },
    });
  return { ...created, token, read, ...opsOn(ocr, created.id, created.mgmt, token) };
}

const squash = (text: string) => text.replace(/\s+/g, " ").trim();

describe("ocr", () => {
  it("reads PNG, JPEG and TIFF pictures of known text: the words, their boxes and confidences", async () => {
    const r = await reader();
    const pdf = await printed(r.token, [LINES]);
    for (const format of ["png", "jpeg", "tiff"] as const) {
      const res = await r.read(await image(pdf, format));
      expect(res.status, await res.clone().text()).toBe(200);
      const seen = (await res.json()) as {
        format: string;
        text: string;
        pages: { width: number; words: { text: string; confidence: number; left: number; width: number }[] }[];
        mean_confidence: number;
      };
      expect(seen.format).toBe(format);
      for (const line of LINES) expect(squash(seen.text), format).toContain(line);
      const invoice = seen.pages[0]!.words.find((w) => w.text === "4711")!;
      expect(invoice.confidence).toBeGreaterThan(80);
      expect(invoice.left).toBeGreaterThan(0);
      expect(invoice.left + invoice.width).toBeLessThan(seen.pages[0]!.width);
      expect(seen.mean_confidence).toBeGreaterThan(80);
    }
    expect((await r.ok("list_recognitions", "/recognitions")).items).toHaveLength(3);
  });

  it("reads a PDF page by page, and a file fetched from a URL; keeps, gets and deletes recognitions", async () => {
    const r = await reader();
    const pdf = await printed(r.token, [["First page says alpha"], ["Second page says omega"]]);
    const res = await r.read(pdf);
    expect(res.status).toBe(200);
    const seen = (await res.json()) as {
      recognition_id: string;
      format: string;
      pages: { page: number; text: string }[];
    };
    expect(seen.format).toBe("pdf");
    expect(seen.pages.map((p) => p.page)).toEqual([1, 2]);
    expect(squash(seen.pages[0]!.text)).toContain("First page says alpha");
    expect(squash(seen.pages[1]!.text)).toContain("Second page says omega");

    const url = await serveContent(`ocr-${crypto.randomUUID()}`, await image(pdf, "png"), { type: "image/png" });
    const fetched = await r.ok("recognize_url", "/recognitions/from-url", { url });
    expect(fetched.source_url).toBe(url);
    expect(squash(fetched.text)).toContain("First page says alpha");

    expect((await r.ok("get_recognition", `/recognitions/${seen.recognition_id}`)).pages).toHaveLength(2);
    await r.ok("delete_recognition", `/recognitions/${seen.recognition_id}`);
    expect((await r.refused("get_recognition", `/recognitions/${seen.recognition_id}`)).status).toBe(404);
  });

  it("refuses what it cannot read with 4xx, charging nothing", async () => {
    const r = await reader();
    const missing = await reader(["deu"]);
    const png = await image(await printed(r.token, [["Hello"]]), "png");
    const { balance_usd: before } = await balanceOf(r.token);
    const expectRefused = async (res: Response, status: number, detail: RegExp) => {
      const problem = await problemOf(res);
      expect(problem.status).toBe(status);
      expect(problem.detail).toMatch(detail);
    };
    await expectRefused(await r.read(new TextEncoder().encode("just text, not a picture")), 415, /PNG, JPEG/);
    await expectRefused(await r.read(new Uint8Array(0)), 422, /empty/);
    await expectRefused(await r.read(png.slice(0, 200)), 422, /could not be read/);
    await expectRefused(await missing.read(png), 422, /Not installed here: deu/);
    const html = await serveContent(`ocr-html-${crypto.randomUUID()}`, "<p>not an image</p>", { type: "text/html" });
    expect((await r.refused("recognize_url", "/recognitions/from-url", { url: html })).status).toBe(415);
    expect(
      (await r.refused("recognize_url", "/recognitions/from-url", { url: "ftp://example.com/x.png" })).status,
    ).toBe(422);
    expect((await balanceOf(r.token)).balance_usd).toBe(before);
    expect((await r.ok("list_recognitions", "/recognitions")).items).toEqual([]);
  });
});
