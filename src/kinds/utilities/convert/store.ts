/**
 * A convert resource's conversions: the upload read (bounded), turned into a PDF by the engine its
 * format needs (prepare: nothing charged if that fails), the PDF put in R2, then recorded (run).
 */
import { randomId } from "../../../auth/ids";
import { readCapped } from "../../../delivery/fetch-guarded";
import { officeToPdf } from "../../../engines/office";
import { keepPdf, pdfEngine } from "../../../engines/pdf";
import { AppError } from "../../../http/errors";
import { checkRange } from "../../../kind/downloads";
import type { EngineStore, PrepareContext } from "../../../kind/kind";
import { iso } from "../../../time";
import { keysetPage, type Page } from "../../../kind/pages";
import { sourceOf } from "./formats";
import { MAX_CONVERSIONS, MAX_DOCUMENT_BYTES, type ConversionView } from "./schema";

export const TABLES = [
  `CREATE TABLE conversions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, conversion_id TEXT NOT NULL UNIQUE, source_format TEXT NOT NULL, source_bytes INTEGER NOT NULL,
    engine TEXT NOT NULL, object_key TEXT NOT NULL, size INTEGER NOT NULL, sha256 TEXT NOT NULL, pages INTEGER, created_at INTEGER NOT NULL
  )`,
];

type Row = {
  seq: number; conversion_id: string; source_format: string; source_bytes: number; engine: ConversionView["engine"];
  object_key: string; size: number; sha256: string; pages: number | null; created_at: number;
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

/** Default A4 portrait, 0.4 in margins: text and images printed as a page would be. */
const PRINT = { paper: { width: 8.27, height: 11.7 }, margins: { top: 0.4, right: 0.4, bottom: 0.4, left: 0.4 }, landscape: false, printBackground: true, scale: 1, header: null, footer: null, waitForSelector: null, waitMs: 0 };

export async function convert(ctx: PrepareContext, contentType: string, body: ReadableStream<Uint8Array> | null): Promise<Converted> {
  if (ctx.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM conversions").one().n >= MAX_CONVERSIONS) {
    throw new AppError("storage_full", `This resource keeps at most ${MAX_CONVERSIONS} conversions: delete some first.`);
  }
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
  return { id, key, sourceFormat: source.format, sourceBytes: bytes.length, engine, ...(await keepPdf(ctx.env.BUCKET, key, pdf, `${id}.pdf`)) };
}

export async function discard(ctx: PrepareContext, converted: Converted): Promise<void> {
  await ctx.env.BUCKET.delete(converted.key);
}

const viewOf = (store: EngineStore, r: Row): ConversionView => ({
  conversion_id: r.conversion_id, source_format: r.source_format, source_bytes: r.source_bytes, engine: r.engine, size: r.size, sha256: r.sha256,
  pages: r.pages, created_at: iso(r.created_at), content_url: store.downloadUrl(r.object_key),
});

export function record(store: EngineStore, c: Converted): ConversionView {
  store.sql.exec(
    "INSERT INTO conversions (conversion_id, source_format, source_bytes, engine, object_key, size, sha256, pages, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    c.id, c.sourceFormat, c.sourceBytes, c.engine, c.key, c.size, c.sha256, c.pages, store.now,
  );
  return get(store, c.id);
}

function row(store: EngineStore, id: string): Row {
  const r = store.sql.exec<Row>("SELECT * FROM conversions WHERE conversion_id = ?", id).toArray()[0];
  if (!r) throw new AppError("not_found", `No conversion ${id} here.`);
  return r;
}

export const get = (store: EngineStore, id: string): ConversionView => viewOf(store, row(store, id));

/** What the download serves; a Range that selects nothing is refused here, before it is charged. */
export function stored(store: EngineStore, id: string, range: string | undefined): { object_key: string } {
  const r = row(store, id);
  checkRange(range, r.size);
  return { object_key: r.object_key };
}

export function remove(store: EngineStore, id: string): ConversionView {
  const r = row(store, id);
  store.sql.exec("DELETE FROM conversions WHERE seq = ?", r.seq);
  store.dropObjects([r.object_key]);
  return viewOf(store, r);
}

export function page(store: EngineStore, limit: number, cursor: string | undefined): Page<ConversionView> {
  const before = cursor === undefined ? Number.MAX_SAFE_INTEGER : Number(cursor);
  const rows = store.sql.exec<Row>("SELECT * FROM conversions WHERE seq < ? ORDER BY seq DESC LIMIT ?", before, limit + 1).toArray();
  return keysetPage(rows, limit, (r) => r.seq, (r) => viewOf(store, r));
}

export const all = (store: EngineStore): ConversionView[] => store.sql.exec<Row>("SELECT * FROM conversions ORDER BY seq DESC").toArray().map((r) => viewOf(store, r));

export function usage(store: EngineStore): { conversions: number; bytes: number } {
  const u = store.sql.exec<{ n: number; bytes: number | null }>("SELECT COUNT(*) AS n, SUM(size) AS bytes FROM conversions").one();
  return { conversions: u.n, bytes: u.bytes ?? 0 };
}
