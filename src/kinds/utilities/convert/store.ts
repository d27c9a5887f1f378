/**
 * A convert resource's conversions: the upload read (bounded), turned into a PDF by the engine its
 * format needs (prepare: nothing charged if that fails), the PDF put in R2, then recorded (run).
 */
import { randomId } from "../../../auth/ids";
import { readCapped } from "../../../delivery/fetch-guarded";
import { officeToPdf } from "../../../engines/office";
import { keepPdf, pdfEngine } from "../../../engines/pdf";
import { AppError } from "../../../http/errors";
import { storedArtifacts } from "../../../kind/artifacts";
import type { EngineStore, PrepareContext } from "../../../kind/kind";
import { iso } from "../../../time";
import { sourceOf } from "./formats";
import { MAX_CONVERSIONS, MAX_DOCUMENT_BYTES, type ConversionView } from "./schema";

export const TABLES = [
  `CREATE TABLE conversions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, conversion_id TEXT NOT NULL UNIQUE, source_format TEXT NOT NULL,
    source_bytes INTEGER NOT NULL, engine TEXT NOT NULL, object_key TEXT NOT NULL, size INTEGER NOT NULL,
    sha256 TEXT NOT NULL, pages INTEGER, created_at INTEGER NOT NULL
  )`,
];

type Row = {
  seq: number;
  conversion_id: string;
  source_format: string;
  source_bytes: number;
  engine: ConversionView["engine"];
  object_key: string;
  size: number;
  sha256: string;
  pages: number | null;
  created_at: number;
};

export interface Converted {
  id: string;
  key: string;
  sourceFormat: string;
  sourceBytes: number;
  engine: ConversionView["engine"];
  size: number;
  sha256: string;
  pages: number | null;
}

/** Listed, read, downloaded and deleted as every kept artifact is (src/kind/artifacts.ts). */
export const conversions = storedArtifacts({
  table: "conversions",
  idColumn: "conversion_id",
  noun: "conversion",
  plural: "conversions",
  max: MAX_CONVERSIONS,
  viewOf: (store, r: Row): ConversionView => ({
    conversion_id: r.conversion_id,
    source_format: r.source_format,
    source_bytes: r.source_bytes,
    engine: r.engine,
    size: r.size,
    sha256: r.sha256,
    pages: r.pages,
    created_at: iso(r.created_at),
    content_url: store.downloadUrl(r.object_key),
  }),
});

/** Default A4 portrait, 0.4 in margins: text and images printed as a page would be. */
const PRINT = {
  paper: { width: 8.27, height: 11.7 },
  margins: { top: 0.4, right: 0.4, bottom: 0.4, left: 0.4 },
  landscape: false,
  printBackground: true,
  scale: 1,
  header: null,
  footer: null,
  waitForSelector: null,
  waitMs: 0,
};

export async function convert(
  ctx: PrepareContext,
  contentType: string,
  body: ReadableStream<Uint8Array> | null,
): Promise<Converted> {
  conversions.checkRoom(ctx.sql);
  const { bytes, truncated } = await readCapped(body, MAX_DOCUMENT_BYTES);
  if (truncated) throw new AppError("payload_too_large", `Documents up to ${MAX_DOCUMENT_BYTES} bytes are converted.`);
  const source = sourceOf(contentType, bytes);
  let pdf: Uint8Array;
  let engine: ConversionView["engine"];
  if ("office" in source) {
    pdf = await officeToPdf(ctx.env, source.office, source.extension);
    engine = "libreoffice";
  } else {
    const printer = pdfEngine(ctx.env);
    pdf = await printer.render({ ...PRINT, source: { html: source.html } });
    engine = printer.name;
  }
  ctx.stillHere();
  const id = randomId("cnv_");
  const key = `${ctx.resourceId}/convert/${id}.pdf`;
  return {
    id,
    key,
    sourceFormat: source.format,
    sourceBytes: bytes.length,
    engine,
    ...(await keepPdf(ctx.env.BUCKET, key, pdf, `${id}.pdf`)),
  };
}

export function record(store: EngineStore, c: Converted): ConversionView {
  store.sql.exec(
    "INSERT INTO conversions (conversion_id, source_format, source_bytes, engine, object_key, size, " +
      "sha256, pages, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    c.id,
    c.sourceFormat,
    c.sourceBytes,
    c.engine,
    c.key,
    c.size,
    c.sha256,
    c.pages,
    store.now,
  );
  return conversions.get(store, c.id);
}

export function usage(store: EngineStore): { conversions: number; bytes: number } {
  const u = conversions.usage(store.sql);
  return { conversions: u.n, bytes: u.bytes };
}
