/**
 * Image or PDF → text with word boxes: one interface, one protocol, run where the operator puts it.
 * The engine answers `POST /forms/ocr` (multipart `files` and `languages`) with the recognised pages, and
 * `GET /ocr/languages`: `scripts/engines.mjs` (Debian's tesseract, poppler for PDFs) locally, and the same
 * program as the engines image in production, in a Cloudflare Container or at `OCR_ENGINE_URL` (else
 * `ENGINE_URL`; endpoint.ts): Gotenberg has no such route.
 * Tesseract compiled to WebAssembly was weighed and left out: its core and English model are ~15 MB,
 * past a Worker's script size, and a page takes seconds of CPU (docs/architecture.md, "Engines").
 */
import type { Env } from "../env";
import { AppError } from "../http/errors";
import { engineFetch } from "./endpoint";

export const OCR_TIMEOUT_MS = 90_000;

export interface OcrWord {
  text: string;
  /** 0–100. */
  confidence: number;
  left: number;
  top: number;
  width: number;
  height: number;
}

export interface OcrPage {
  page: number;
  /** Pixels of the image read (a PDF's pages at 200 dpi). */
  width: number;
  height: number;
  text: string;
  words: OcrWord[];
}

export interface OcrResult {
  languages: string[];
  pages: OcrPage[];
}

export interface OcrEngine {
  recognize(bytes: Uint8Array, contentType: string, languages: string[]): Promise<OcrResult>;
}

export function ocrEngine(env: Env): OcrEngine {
  const send = engineFetch(env, "ocr");
  if (!send)
    throw new AppError(
      "engine_unavailable",
      "No OCR engine is configured here (ENGINE_CONTAINER, OCR_ENGINE_URL or ENGINE_URL); nothing was charged.",
    );
  return {
    async recognize(bytes, contentType, languages) {
      const form = new FormData();
      form.append("files", new Blob([bytes], { type: contentType }), "input");
      form.append("languages", languages.join("+"));
      let res: Response;
      try {
        res = await send("/forms/ocr", { method: "POST", body: form, signal: AbortSignal.timeout(OCR_TIMEOUT_MS) });
      } catch (err) {
        if (err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError"))
          throw new AppError("engine_timeout", `The OCR engine did not answer within ${OCR_TIMEOUT_MS / 1000} s.`);
        throw new AppError("engine_unavailable", "The OCR engine could not be reached; nothing was charged.");
      }
      if (res.ok) return (await res.json()) as OcrResult;
      const detail = (await res.text().catch(() => "")).slice(0, 300).trim();
      if (res.status >= 500)
        throw new AppError("engine_unavailable", `The OCR engine failed (${res.status}); nothing was charged.`);
      throw new AppError("validation_failed", `The file could not be read: ${detail || res.status}.`);
    },
  };
}
