/**
 * convert, per issue 15 and docs/kinds.md: HTML, Markdown, plain text and an image printed by the local
 * PDF engine, and DOCX, ODT, XLSX and PPTX (written here from their specifications) converted by
 * Debian's LibreOffice; each PDF read back by poppler's pdftotext and pdfinfo. A body that is not
 * what its Content-Type says, or that LibreOffice cannot open, is refused and not charged.
 */
import { SELF, env } from "cloudflare:test";
import { strToU8 } from "fflate";
import { describe, expect, it } from "vitest";
import { convertKind } from "../../src/kinds/utilities/convert";
import { ORIGIN, balanceOf, buyCredits, createResource, managed, opsOn, problemOf } from "../harness";
import { docx, odt, pptx, xlsx } from "./office-documents";

const poppler = async (tool: "pdftotext" | "pdfinfo" | "pdftoppm?format=png", bytes: Uint8Array | ArrayBuffer) => {
  const res = await fetch(`${env.TEST_POPPLER_URL}/${tool}`, { method: "POST", body: bytes });
  expect(res.status).toBe(200);
  return res;
};

async function converter() {
  const { token } = await buyCredits(1);
  const created = await createResource("convert", token, {});
  const upload = (body: Uint8Array, type: string) =>
    SELF.fetch(`${ORIGIN}/v1/convert/${created.id}/conversions`, {
      method: "PUT",
      body,
      headers: { ...managed(created.mgmt, token), "content-type": type },
    });
  /** Converts, and answers the record and the PDF's text and info as poppler reads them. */
  const converted = async (body: Uint8Array, type: string) => {
    const res = await upload(body, type);
    expect(res.status, await res.clone().text()).toBe(200);
    const record = (await res.json()) as { source_format: string; engine: string; pages: number; content_url: string };
    const pdf = new Uint8Array(await (await SELF.fetch(record.content_url)).arrayBuffer());
    return {
      record,
      pdf,
      text: (await (await poppler("pdftotext", pdf)).text()).replace(/\s+/g, " "),
      info: await (await poppler("pdfinfo", pdf)).text(),
    };
  };
  return { ...created, token, upload, converted, ...opsOn(convertKind, created.id, created.mgmt, token) };
}

const OFFICE = {
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  odt: "application/vnd.oasis.opendocument.text",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  pptx: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
};

describe("convert", () => {
  it("prints HTML, Markdown, plain text and an image to PDF", async () => {
    const c = await converter();
    const html = await c.converted(strToU8("<h1>Hello from HTML</h1><p>Paragraph text</p>"), "text/html");
    expect(html.record).toMatchObject({ source_format: "html", engine: "gotenberg", pages: 1 });
    expect(html.text).toContain("Hello from HTML Paragraph text");
    const md = await c.converted(
      strToU8("# Minutes\n\n- Budget **approved**\n- <script>x</script>"),
      "text/markdown; charset=utf-8",
    );
    expect(md.record.source_format).toBe("markdown");
    expect(md.text).toContain("Budget approved");
    expect(md.text).toContain("<script>x</script>");
    const text = await c.converted(strToU8("Line one\n    indented <b>not bold</b>"), "text/plain");
    expect(text.text).toContain("indented <b>not bold</b>");
    const [w, h] = /Page size:\s+([\d.]+) x ([\d.]+) pts/.exec(text.info)!.slice(1).map(Number);
    expect(
      [Math.abs(w! - 595.3), Math.abs(h! - 841.9)].every((d) => d < 1.5),
      text.info,
    ).toBe(true); // A4, within Chrome's rounding
    const png = new Uint8Array(await (await poppler("pdftoppm?format=png", html.pdf)).arrayBuffer());
    const image = await c.converted(png, "image/png");
    expect(image.record).toMatchObject({ source_format: "png", pages: 1 });
    expect(image.info).toMatch(/Pages:\s+1/);
    expect((await c.ok("list_conversions", "/conversions")).items).toHaveLength(4);
  });

  it("converts DOCX, ODT, XLSX and PPTX through LibreOffice", async () => {
    const c = await converter();
    const cases: [keyof typeof OFFICE, Uint8Array, string[]][] = [
      ["docx", docx("Quarterly report from Word"), ["Quarterly report from Word"]],
      ["odt", odt("Open document text body"), ["Open document text body"]],
      ["xlsx", xlsx("Revenue", 4711), ["Revenue", "4711"]],
      ["pptx", pptx("Slide deck headline"), ["Slide deck headline"]],
    ];
    for (const [format, bytes, expected] of cases) {
      const out = await c.converted(bytes, OFFICE[format]);
      expect(out.record).toMatchObject({ source_format: format, engine: "libreoffice" });
      for (const t of expected) expect(out.text, format).toContain(t);
      expect(out.info, format).toMatch(/Pages:\s+1/);
    }
  }, 240_000);

  it("refuses what is not what it says, or cannot be opened, with 4xx, charging nothing", async () => {
    const c = await converter();
    const { balance_usd: before } = await balanceOf(c.token);
    const refused = async (body: Uint8Array, type: string, status: number, detail: RegExp) => {
      const problem = await problemOf(await c.upload(body, type));
      expect(problem.status, type).toBe(status);
      expect(problem.detail, type).toMatch(detail);
    };
    await refused(strToU8("x"), "application/x-msdownload", 415, /Content-Type/);
    await refused(new Uint8Array(0), "text/plain", 422, /empty/);
    await refused(Uint8Array.of(0xff, 0xfe, 0x00, 0xd8), "text/plain", 422, /UTF-8/);
    await refused(strToU8("not a picture"), "image/png", 422, /not a image\/png/);
    await refused(strToU8("plain words"), OFFICE.docx, 422, /not a \.docx/);
    await refused(Uint8Array.of(0x50, 0x4b, 0x03, 0x04, 1, 2, 3, 4, 5, 6), OFFICE.docx, 422, /could not be/);
    expect((await balanceOf(c.token)).balance_usd).toBe(before);
    expect((await c.ok("list_conversions", "/conversions")).items).toEqual([]);
  }, 120_000);
});
