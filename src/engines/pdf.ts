/**
 * HTML or a URL → PDF: one interface, two real engines, chosen by configuration.
 * - Browser Rendering's REST API (`BROWSER_RENDERING_ACCOUNT_ID` + `BROWSER_RENDERING_API_TOKEN`):
 *   Cloudflare's headless Chrome, nothing to run beside the Worker.
 * - A Gotenberg-compatible engine (endpoint.ts): the engines image as a Cloudflare Container, or real
 *   Gotenberg or the engines image at `ENGINE_URL`; `scripts/engines.mjs` (Debian's chromium) in development and tests.
 * Both are given the same job and answer the PDF's bytes, or an AppError that charges nothing:
 * 422 for what the job asked that cannot be done, 503 when no engine answers, 504 past the timeout.
 */
import type { Env } from "../env";
import { AppError } from "../http/errors";
import { readCapped } from "../delivery/fetch-guarded";
import { attachmentDisposition } from "../http/header-fields";
import { sniff } from "../http/sniff";
import { digestHex } from "../bytes";
import { engineFetch, type EngineFetch } from "./endpoint";

/** The longest a render may take, engine time included. */
export const RENDER_TIMEOUT_MS = 60_000;
export const MAX_PDF_BYTES = 50_000_000;

export interface PdfJob {
  source: { html: string } | { url: string };
  /** Inches. */
  paper: { width: number; height: number };
  margins: { top: number; right: number; bottom: number; left: number };
  landscape: boolean;
  printBackground: boolean;
  scale: number;
  /** Chromium's header and footer templates (`<span class="pageNumber">` and the like). */
  header: string | null;
  footer: string | null;
  /** Before printing: until this selector is visible, then this long. */
  waitForSelector: string | null;
  waitMs: number;
}

export interface PdfEngine {
  readonly name: "browser-rendering" | "gotenberg";
  render(job: PdfJob): Promise<Uint8Array>;
}

/** The engine's answer, read whole (PDFs are bounded) or turned into the error the caller gets. */
async function pdfOf(name: string, res: Response): Promise<Uint8Array> {
  if (!res.ok) {
    const detail = (await res.text().catch(() => "")).slice(0, 300).trim();
    if (res.status === 503 || res.status === 504)
      throw new AppError("engine_timeout", `The ${name} engine gave up: ${detail || res.status}.`);
    if (res.status >= 500 || res.status === 401 || res.status === 403)
      throw new AppError("engine_unavailable", `The ${name} engine failed (${res.status}); nothing was charged.`);
    throw new AppError(
      "validation_failed",
      `It could not be rendered: ${detail || `the engine answered ${res.status}`}.`,
    );
  }
  const { bytes, truncated } = await readCapped(res.body, MAX_PDF_BYTES);
  if (truncated) throw new AppError("validation_failed", `The PDF is larger than ${MAX_PDF_BYTES} bytes.`);
  if (sniff(bytes) !== "pdf")
    throw new AppError("engine_unavailable", `The ${name} engine answered something that is not a PDF.`);
  return bytes;
}

/**
 * Calls an engine that answers a PDF (`send` given the timeout's signal), turning a timeout or a connection failure
 * into 504 / 503.
 */
export async function enginePdf(
  name: string,
  send: (signal: AbortSignal) => Promise<Response>,
  timeoutMs = RENDER_TIMEOUT_MS,
): Promise<Uint8Array> {
  let res: Response;
  try {
    res = await send(AbortSignal.timeout(timeoutMs));
  } catch (err) {
    if (err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError"))
      throw new AppError("engine_timeout", `The ${name} engine did not answer within ${timeoutMs / 1000} s.`);
    throw new AppError("engine_unavailable", `The ${name} engine could not be reached; nothing was charged.`);
  }
  return pdfOf(name, res);
}

/** Gotenberg's /forms/chromium/convert/{html,url} (multipart; lengths in inches, durations like `500ms`). */
export function gotenbergPdf(send: EngineFetch): PdfEngine {
  return {
    name: "gotenberg",
    render(job) {
      const form = new FormData();
      const file = (name: string, html: string) => form.append("files", new Blob([html], { type: "text/html" }), name);
      if ("html" in job.source) file("index.html", job.source.html);
      else form.append("url", job.source.url);
      if (job.header !== null) file("header.html", job.header);
      if (job.footer !== null) file("footer.html", job.footer);
      const fields: Record<string, string | number | boolean> = {
        paperWidth: job.paper.width,
        paperHeight: job.paper.height,
        marginTop: job.margins.top,
        marginRight: job.margins.right,
        marginBottom: job.margins.bottom,
        marginLeft: job.margins.left,
        landscape: job.landscape,
        printBackground: job.printBackground,
        scale: job.scale,
      };
      if (job.waitForSelector !== null) fields.waitForSelector = job.waitForSelector;
      if (job.waitMs > 0) fields.waitDelay = `${job.waitMs}ms`;
      for (const [k, v] of Object.entries(fields)) form.append(k, String(v));
      return enginePdf("gotenberg", (signal) =>
        send(`/forms/chromium/convert/${"html" in job.source ? "html" : "url"}`, {
          method: "POST",
          body: form,
          signal,
        }),
      );
    },
  };
}

/** Browser Rendering's `POST /accounts/{id}/browser-rendering/pdf` (puppeteer's PDF options). */
export function browserRenderingPdf(accountId: string, apiToken: string): PdfEngine {
  return {
    name: "browser-rendering",
    render(job) {
      const inches = (n: number) => `${n}in`;
      const body = {
        ...job.source,
        pdfOptions: {
          width: inches(job.paper.width),
          height: inches(job.paper.height),
          margin: {
            top: inches(job.margins.top),
            right: inches(job.margins.right),
            bottom: inches(job.margins.bottom),
            left: inches(job.margins.left),
          },
          landscape: job.landscape,
          printBackground: job.printBackground,
          scale: job.scale,
          displayHeaderFooter: job.header !== null || job.footer !== null,
          headerTemplate: job.header ?? "<span></span>",
          footerTemplate: job.footer ?? "<span></span>",
        },
        gotoOptions: { waitUntil: "load", timeout: RENDER_TIMEOUT_MS - 5000 },
        ...(job.waitForSelector !== null ? { waitForSelector: { selector: job.waitForSelector, visible: true } } : {}),
        ...(job.waitMs > 0 ? { waitForTimeout: job.waitMs } : {}),
      };
      return enginePdf("browser-rendering", (signal) =>
        fetch(
          `https://api.cloudflare.com/client/v4/accounts/${encodeURIComponent(accountId)}/browser-rendering` +
            `/pdf?cacheTTL=0`,
          {
            method: "POST",
            headers: {
              authorization: `Bearer ${apiToken}`,
              "content-type": "application/json",
              accept: "application/pdf",
            },
            body: JSON.stringify(body),
            signal,
          },
        ),
      );
    },
  };
}

/** The configured engine: Browser Rendering when its account and token are set, else the Gotenberg engine; else 503. */
export function pdfEngine(env: Env): PdfEngine {
  if (env.BROWSER_RENDERING_ACCOUNT_ID && env.BROWSER_RENDERING_API_TOKEN)
    return browserRenderingPdf(env.BROWSER_RENDERING_ACCOUNT_ID, env.BROWSER_RENDERING_API_TOKEN);
  const gotenberg = engineFetch(env, "gotenberg");
  if (gotenberg) return gotenbergPdf(gotenberg);
  throw new AppError(
    "engine_unavailable",
    "No PDF engine is configured here (BROWSER_RENDERING_*, ENGINE_CONTAINER or ENGINE_URL); nothing was charged.",
  );
}

/** Pages in the PDF's page tree (the root's /Count), or null when the file does not say plainly. */
export function pageCount(pdf: Uint8Array): number | null {
  const text = new TextDecoder("latin1").decode(pdf);
  let pages: number | null = null;
  for (const m of text.matchAll(/\/Type\s*\/Pages\b[^>]*?\/Count\s+(\d+)|\/Count\s+(\d+)[^>]*?\/Type\s*\/Pages\b/g))
    pages = Math.max(pages ?? 0, Number(m[1] ?? m[2]));
  return pages;
}

/** A PDF an engine made, put in R2 under `key` as a download named `filename`: what a record of it keeps. */
export async function keepPdf(
  bucket: R2Bucket,
  key: string,
  pdf: Uint8Array,
  filename: string,
): Promise<{ size: number; sha256: string; pages: number | null }> {
  await bucket.put(key, pdf, {
    httpMetadata: { contentType: "application/pdf", contentDisposition: attachmentDisposition(filename) },
  });
  return { size: pdf.length, sha256: await digestHex(pdf), pages: pageCount(pdf) };
}
