/**
 * A pdf resource's renders: each one rendered by the configured engine (prepare: outside any
 * transaction, nothing charged if it fails), its PDF put in R2, then recorded (run). Kept until
 * deleted or the resource ends; MAX_RENDERS at most.
 */
import { randomId } from "../../../auth/ids";
import { allowsPrivateTargets, checkEgressUrl } from "../../../delivery/egress-guard";
import { keepPdf, pdfEngine, type PdfJob } from "../../../engines/pdf";
import type { EngineStore, PrepareContext } from "../../../kind/kind";
import { storedArtifacts } from "../../../kind/artifacts";
import { iso } from "../../../time";
import { MAX_RENDERS, PAPER, type RenderInput, type RenderView } from "./schema";

export const TABLES = [
  `CREATE TABLE renders (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, render_id TEXT NOT NULL UNIQUE, source TEXT NOT NULL, url TEXT,
    paper TEXT NOT NULL, landscape INTEGER NOT NULL, object_key TEXT NOT NULL, size INTEGER NOT NULL,
    sha256 TEXT NOT NULL, pages INTEGER, engine TEXT NOT NULL, created_at INTEGER NOT NULL
  )`,
];

type RenderRow = {
  seq: number;
  render_id: string;
  source: "html" | "url";
  url: string | null;
  paper: string;
  landscape: number;
  object_key: string;
  size: number;
  sha256: string;
  pages: number | null;
  engine: RenderView["engine"];
  created_at: number;
};

/** A render made and stored, not yet recorded. */
export interface Rendered {
  renderId: string;
  key: string;
  size: number;
  sha256: string;
  pages: number | null;
  engine: RenderView["engine"];
}

/** Listed, read, downloaded and deleted as every kept artifact is (src/kind/artifacts.ts). */
export const renders = storedArtifacts({
  table: "renders",
  idColumn: "render_id",
  noun: "render",
  plural: "renders",
  max: MAX_RENDERS,
  viewOf: (store, r: RenderRow): RenderView => ({
    render_id: r.render_id,
    source: r.source,
    url: r.url,
    paper: r.paper,
    landscape: r.landscape === 1,
    size: r.size,
    sha256: r.sha256,
    pages: r.pages,
    engine: r.engine,
    created_at: iso(r.created_at),
    content_url: store.downloadUrl(r.object_key),
  }),
});

function jobOf(input: RenderInput): PdfJob {
  const [width, height] = PAPER[input.paper]!;
  return {
    source: input.html !== undefined ? { html: input.html } : { url: input.url! },
    paper: { width, height },
    margins: input.margins,
    landscape: input.landscape,
    printBackground: input.print_background,
    scale: input.scale,
    header: input.header_html ?? null,
    footer: input.footer_html ?? null,
    waitForSelector: input.wait_for_selector ?? null,
    waitMs: input.wait_ms,
  };
}

export async function render(ctx: PrepareContext, input: RenderInput): Promise<Rendered> {
  renders.checkRoom(ctx.sql);
  if (input.url !== undefined) checkEgressUrl(input.url, allowsPrivateTargets(ctx.env.ALLOW_PRIVATE_TARGETS), "url");
  const engine = pdfEngine(ctx.env);
  const pdf = await engine.render(jobOf(input));
  ctx.stillHere();
  const renderId = randomId("pdf_");
  const key = `${ctx.resourceId}/pdf/${renderId}.pdf`;
  return {
    renderId,
    key,
    engine: engine.name,
    ...(await keepPdf(ctx.env.BUCKET, key, pdf, input.filename ?? "document.pdf")),
  };
}

export function record(store: EngineStore, input: RenderInput, r: Rendered): RenderView {
  store.sql.exec(
    "INSERT INTO renders (render_id, source, url, paper, landscape, object_key, size, sha256, pages, " +
      "engine, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    r.renderId,
    input.html !== undefined ? "html" : "url",
    input.url ?? null,
    input.paper,
    input.landscape ? 1 : 0,
    r.key,
    r.size,
    r.sha256,
    r.pages,
    r.engine,
    store.now,
  );
  return renders.get(store, r.renderId);
}

export function usage(store: EngineStore): { renders: number; bytes: number } {
  const u = renders.usage(store.sql);
  return { renders: u.n, bytes: u.bytes };
}
