/**
 * ocr: the text of an image or a PDF, with word boxes and confidences per page, read by a real
 * engine (src/engines/ocr.ts: tesseract, beside the Worker). The file is uploaded or fetched through
 * the egress guard; its format is told by its bytes; a file the engine cannot read, or an engine
 * that fails, is not charged.
 */
import { rawBodyInput } from "../../../openapi/schemas";
import { artifactOps } from "../../../kind/artifact-ops";
import { kindOf } from "../../../kind/kind";
import { fromUpload, fromUrl, recognitions, record, TABLES, usage } from "./store";
import {
  fromUrlInput,
  MAX_FILE_BYTES,
  MAX_RECOGNITIONS,
  ocrCreate,
  recognitionsPage,
  recognitionView,
  type OcrConfig,
} from "./schema";

const OP_PRICE = 100; // µUSD, $0.0001
const READ_PRICE = 5000; // $0.005 a file

/** A blank 32×32 PNG: a small file the example can send (it reads as no text). */
const BLANK_PNG = atob(
  "iVBORw0KGgoAAAANSUhEUgAAACAAAAAgCAAAAABWESUoAAAAFklEQVR42mP4TwAwjCoYVTCqYKQqAAA/aPwuqUTQyAAAAABJRU5ErkJggg==",
);

const kind = kindOf<OcrConfig>();

export const ocr = kind.define({
  kind: "ocr",
  family: "utilities",
  title: "OCR",
  summary:
    `Text from an image (PNG, JPEG, TIFF, WebP) or a PDF (up to ${MAX_FILE_BYTES} bytes), uploaded or ` +
    `fetched from a URL, read by tesseract: ` +
    "per page, the text and each word with its box and confidence, in the languages chosen. A file that " +
    "cannot be read is not charged.",
  createSchema: ocrCreate,
  example: { languages: ["eng"] },
  migrations: [{ sql: TABLES }],
  dayPriceMicro: 1000,
  defaultTtlSeconds: 7 * 86400,
  maxTtlSeconds: 90 * 86400,
  limits: { max_file_bytes: MAX_FILE_BYTES, max_recognitions: MAX_RECOGNITIONS },
  usage: (store) => usage(store),
  exportData: (store) => ({ recognitions: recognitions.all(store) }),
  ops: [
    kind.op({
      name: "recognize",
      method: "put",
      path: "/recognitions",
      summary: "Read the text of the image or PDF sent as the body (its format told by its bytes)",
      priceMicro: READ_PRICE,
      input: rawBodyInput,
      output: recognitionView,
      rawBody: true,
      maxBodyBytes: MAX_FILE_BYTES,
      errors: [413, 415, 503, 504, 507],
      example: { headers: { "content-type": "image/png" }, bytes: BLANK_PNG },
      prepare: (ctx, config, _input, body) => fromUpload(ctx, config, body),
      run: (store, _config, _input, recognized) => record(store, recognized),
    }),
    kind.op({
      name: "recognize_url",
      method: "post",
      path: "/recognitions/from-url",
      summary: "Read the text of an image or PDF at a URL",
      priceMicro: READ_PRICE,
      input: fromUrlInput,
      output: recognitionView,
      errors: [413, 415, 502, 503, 504, 507],
      example: { input: { url: "https://example.com/files/pixel.png" } },
      prepare: (ctx, config, input) => fromUrl(ctx, config, input.url),
      run: (store, _config, _input, recognized) => record(store, recognized),
    }),
    ...artifactOps(recognitions, {
      path: "/recognitions",
      idPrefix: "ocr_",
      view: recognitionView,
      page: recognitionsPage,
      madeBy: "recognize",
      summaries: { get: "One recognition: text, pages, words", delete: "Delete a recognition" },
      priceMicro: OP_PRICE,
    }),
  ],
});
