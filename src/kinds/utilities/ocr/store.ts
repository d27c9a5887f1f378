/**
 * An ocr resource's recognitions: the file read (an upload, or fetched through the egress guard),
 * its format told by its first bytes, sent to the engine (prepare: nothing charged if that fails),
 * and the result kept (run) until deleted or the resource ends.
 */
import { randomId } from "../../../auth/ids";
import { utf8Length } from "../../../bytes";
import { fetchGuarded, readCapped } from "../../../delivery/fetch-guarded";
import { ocrEngine, type OcrResult } from "../../../engines/ocr";
import { AppError } from "../../../http/errors";
import { sniff } from "../../../http/sniff";
import type { EngineStore, PrepareContext } from "../../../kind/kind";
import { iso } from "../../../time";
import { artifacts } from "../../../kind/artifacts";
import {
  FORMATS,
  MAX_FILE_BYTES,
  MAX_RECOGNITIONS,
  MAX_RESULT_BYTES,
  type OcrConfig,
  type RecognitionView,
} from "./schema";

export const TABLES = [
  `CREATE TABLE recognitions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, recognition_id TEXT NOT NULL UNIQUE, format TEXT NOT NULL,
    bytes INTEGER NOT NULL, source_url TEXT, result TEXT NOT NULL, created_at INTEGER NOT NULL
  )`,
];

type Format = keyof typeof FORMATS;
type Row = {
  seq: number;
  recognition_id: string;
  format: Format;
  bytes: number;
  source_url: string | null;
  result: string;
  created_at: number;
};
type Kept = Omit<RecognitionView, "recognition_id" | "created_at">;

/** The file's format by its magic bytes, or a 415. */
function formatOf(bytes: Uint8Array): Format {
  const format = sniff(bytes);
  if (format === null || !(format in FORMATS))
    throw new AppError("unsupported_media_type", "Send a PNG, JPEG, TIFF or WebP image, or a PDF.");
  return format as Format;
}

/** What is kept of the engine's answer: the whole text always, the word boxes while they fit. */
function kept(result: OcrResult, format: Format, bytes: number, sourceUrl: string | null): Kept {
  const words = result.pages.flatMap((p) => p.words);
  const view: Kept = {
    format,
    bytes,
    source_url: sourceUrl,
    languages: result.languages,
    text: result.pages.map((p) => p.text).join("\n\f\n"),
    pages: result.pages,
    words_truncated: false,
    mean_confidence: words.length
      ? Math.round((words.reduce((s, w) => s + w.confidence, 0) / words.length) * 100) / 100
      : null,
  };
  if (utf8Length(JSON.stringify(view)) <= MAX_RESULT_BYTES) return view;
  return { ...view, pages: result.pages.map((p) => ({ ...p, words: [] })), words_truncated: true };
}

export interface Recognized {
  id: string;
  kept: Kept;
}

async function read(
  ctx: PrepareContext,
  config: OcrConfig,
  bytes: Uint8Array,
  sourceUrl: string | null,
): Promise<Recognized> {
  recognitions.checkRoom(ctx.sql);
  if (bytes.length === 0) throw new AppError("validation_failed", "The file is empty.");
  const format = formatOf(bytes);
  const result = await ocrEngine(ctx.env).recognize(bytes, FORMATS[format], config.languages);
  ctx.stillHere();
  return { id: randomId("ocr_"), kept: kept(result, format, bytes.length, sourceUrl) };
}

export async function fromUpload(
  ctx: PrepareContext,
  config: OcrConfig,
  body: ReadableStream<Uint8Array> | null,
): Promise<Recognized> {
  const { bytes, truncated } = await readCapped(body, MAX_FILE_BYTES);
  if (truncated) throw new AppError("payload_too_large", `Files up to ${MAX_FILE_BYTES} bytes are read.`);
  return read(ctx, config, bytes, null);
}

export async function fromUrl(ctx: PrepareContext, config: OcrConfig, url: string): Promise<Recognized> {
  const fetched = await fetchGuarded(ctx.env, url, { maxBytes: MAX_FILE_BYTES });
  if (fetched.status >= 400)
    throw new AppError("validation_failed", `${url} answered ${fetched.status}.`, {
      errors: [{ path: "url", message: `answered ${fetched.status}` }],
    });
  return read(ctx, config, fetched.body, fetched.url);
}

/** Listed, read and deleted as every kept artifact is (src/kind/artifacts.ts); the result is kept as JSON, no file. */
export const recognitions = artifacts({
  table: "recognitions",
  idColumn: "recognition_id",
  noun: "recognition",
  plural: "recognitions",
  max: MAX_RECOGNITIONS,
  viewOf: (_store, r: Row): RecognitionView => ({
    recognition_id: r.recognition_id,
    ...(JSON.parse(r.result) as Kept),
    created_at: iso(r.created_at),
  }),
});

export function record(store: EngineStore, r: Recognized): RecognitionView {
  store.sql.exec(
    "INSERT INTO recognitions (recognition_id, format, bytes, source_url, result, created_at) VALUES (?, " +
      "?, ?, ?, ?, ?)",
    r.id,
    r.kept.format,
    r.kept.bytes,
    r.kept.source_url,
    JSON.stringify(r.kept),
    store.now,
  );
  return recognitions.get(store, r.id);
}

export const usage = (store: EngineStore) => ({ recognitions: recognitions.count(store.sql) });
