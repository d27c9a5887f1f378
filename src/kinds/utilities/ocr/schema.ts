/** Request and response shapes of ocr; the same schemas validate, type and document. */
import { z } from "@hono/zod-openapi";
import { httpUrl, pageOf } from "../../../openapi/schemas";

export const MAX_FILE_BYTES = 20_000_000;
export const MAX_RECOGNITIONS = 500;
/** What one recognition keeps (its words are dropped past it, its text never). */
export const MAX_RESULT_BYTES = 1_500_000;

/** The files read, by their first bytes: a declared type is not trusted. */
export const FORMATS = {
  png: "image/png",
  jpeg: "image/jpeg",
  tiff: "image/tiff",
  webp: "image/webp",
  pdf: "application/pdf",
} as const;

const language = z.string().regex(/^[a-z]{3}(_[a-z]+)?$/, "a tesseract language name, such as eng, deu or chi_sim");

export const ocrCreate = z.object({
  languages: z
    .array(language)
    .min(1)
    .max(5)
    .default(["eng"])
    .describe(
      "Languages to read, among those the engine has (`eng` always; a language not installed is refused " +
        "when a file is read).",
    ),
});
export type OcrConfig = z.infer<typeof ocrCreate>;

export const fromUrlInput = z.object({
  url: httpUrl.describe(
    `An image or PDF at a public address (checked like every outbound call; at most ${MAX_FILE_BYTES} bytes).`,
  ),
});

const word = z
  .object({
    text: z.string(),
    confidence: z.number().describe("0–100."),
    left: z.int(),
    top: z.int(),
    width: z.int(),
    height: z.int(),
  })
  .describe("A word and its box, in pixels of the page as read.");

export const recognitionView = z
  .object({
    recognition_id: z.string(),
    format: z.enum(Object.keys(FORMATS) as [keyof typeof FORMATS, ...(keyof typeof FORMATS)[]]),
    bytes: z.int(),
    source_url: z.string().nullable(),
    languages: z.array(z.string()),
    text: z.string().describe("All pages' text, pages separated by a form feed."),
    pages: z.array(
      z.object({ page: z.int(), width: z.int(), height: z.int(), text: z.string(), words: z.array(word) }),
    ),
    words_truncated: z
      .boolean()
      .describe(`The word boxes were dropped to keep the result within ${MAX_RESULT_BYTES} bytes (the text is whole).`),
    mean_confidence: z.number().nullable(),
    created_at: z.string(),
  })
  .openapi("OcrRecognition");
export type RecognitionView = z.infer<typeof recognitionView>;

export const recognitionsPage = pageOf(recognitionView).openapi("OcrRecognitionPage");
