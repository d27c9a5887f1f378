/**
 * Where engine calls go (src/engines/endpoint.ts): OCR to OCR_ENGINE_URL when set (Gotenberg has no OCR
 * route, so beside one the OCR engine has its own address), else ENGINE_URL; Gotenberg's routes to
 * ENGINE_URL; and everything to the ENGINE_CONTAINER object when it is bound. The engines are the real
 * local ones (scripts/engines.mjs); an address where nothing listens stands for the wrong one. Containers
 * do not run here, so the bound object answers that it has none, which callers report as 503, uncharged.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Env } from "../../src/env";
import { ocrEngine } from "../../src/engines/ocr";
import { officeToPdf } from "../../src/engines/office";
import { pdfEngine, type PdfJob } from "../../src/engines/pdf";
import { docx } from "./office-documents";

/** Nothing listens there (the discard port). */
const NOWHERE = "http://127.0.0.1:9";

const job: PdfJob = {
  source: { html: '<p style="font: 40px sans-serif">Endpoint 4711</p>' },
  paper: { width: 8.5, height: 11 },
  margins: { top: 0.4, right: 0.4, bottom: 0.4, left: 0.4 },
  landscape: false,
  printBackground: false,
  scale: 1,
  header: null,
  footer: null,
  waitForSelector: null,
  waitMs: 0,
};

const words = async (e: Env, pdf: Uint8Array) =>
  (await ocrEngine(e).recognize(pdf, "application/pdf", ["eng"])).pages
    .map((p) => p.text)
    .join(" ")
    .replace(/\s+/g, " ");
const unavailable = (detail: RegExp) => ({ code: "engine_unavailable", detail: expect.stringMatching(detail) });

describe("engine endpoints", () => {
  it("sends OCR to OCR_ENGINE_URL if set, else to ENGINE_URL; Gotenberg's routes stay at ENGINE_URL", async () => {
    const pdf = await pdfEngine(env).render(job);
    expect(await words(env, pdf)).toContain("Endpoint 4711");

    const apart: Env = { ...env, ENGINE_URL: NOWHERE, OCR_ENGINE_URL: env.ENGINE_URL };
    expect(await words(apart, pdf)).toContain("Endpoint 4711");
    await expect(pdfEngine(apart).render(job)).rejects.toMatchObject(unavailable(/could not be reached/));
    await expect(officeToPdf(apart, docx("Endpoint"), "docx")).rejects.toMatchObject(
      unavailable(/could not be reached/),
    );

    const ocrElsewhere: Env = { ...env, OCR_ENGINE_URL: NOWHERE };
    await expect(words(ocrElsewhere, pdf)).rejects.toMatchObject(unavailable(/could not be reached/));
    expect((await pdfEngine(ocrElsewhere).render(job)).length).toBeGreaterThan(0);
  });

  it("sends every engine call to the ENGINE_CONTAINER object when it is bound, ENGINE_URL then unused", async () => {
    const contained: Env = { ...env, ENGINE_CONTAINER: env.TEST_ENGINE_CONTAINER, OCR_ENGINE_URL: env.ENGINE_URL };
    const pdf = await pdfEngine(env).render(job);
    await expect(pdfEngine(contained).render(job)).rejects.toMatchObject(unavailable(/failed \(502\)/));
    await expect(officeToPdf(contained, docx("Endpoint"), "docx")).rejects.toMatchObject(unavailable(/failed \(502\)/));
    await expect(words(contained, pdf)).rejects.toMatchObject(unavailable(/failed \(502\)/));
    // What the object says, here where no container runs.
    const stub = env.TEST_ENGINE_CONTAINER.get(env.TEST_ENGINE_CONTAINER.idFromName("engines"));
    const res = await stub.fetch("http://engines/health");
    expect(res.status).toBe(502);
    expect(await res.text()).toMatch(/no container/);
  });

  it("answers 503 naming what to configure when no engine is", async () => {
    const none: Env = { ...env, ENGINE_URL: undefined, OCR_ENGINE_URL: undefined, ENGINE_CONTAINER: undefined };
    expect(() => pdfEngine(none)).toThrow(expect.objectContaining(unavailable(/ENGINE_CONTAINER or ENGINE_URL/)));
    expect(() => officeToPdf(none, docx("x"), "docx")).toThrow(
      expect.objectContaining(unavailable(/ENGINE_CONTAINER or ENGINE_URL/)),
    );
    expect(() => ocrEngine(none)).toThrow(expect.objectContaining(unavailable(/OCR_ENGINE_URL/)));
  });
});
