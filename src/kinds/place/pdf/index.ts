/**
 * pdf: HTML or a URL to a real PDF (Gotenberg, DocRaptor). Each render goes to the configured
 * engine (src/engines/pdf.ts: Browser Rendering on Cloudflare, or a Gotenberg-compatible engine,
 * Debian's chromium locally) with page size, margins, orientation, background, scale, header and
 * footer templates and a wait; the PDF is kept in R2 until deleted or the resource ends, and
 * downloaded by signed link or through the API. A render that fails or times out is not charged.
 */
import { storedArtifactOps } from "../../../kind/artifact-ops";
import { kindOf } from "../../../kind/kind";
import { RENDER_TIMEOUT_MS } from "../../../engines/pdf";
import { record, render, renders, TABLES, usage } from "./store";
import { MAX_HTML_BYTES, MAX_RENDERS, pdfCreate, renderInput, rendersPage as pageSchema, renderView } from "./schema";

const OP_PRICE = 100; // µUSD, $0.0001

const kind = kindOf<Record<string, never>>();

export const pdf = kind.define({
  kind: "pdf",
  family: "place",
  title: "HTML to PDF",
  summary:
    "HTML or a URL rendered to a real PDF by headless Chromium (Browser Rendering, or a Gotenberg engine): " +
    "paper size, margins, landscape, background, scale, header and footer templates, wait for a selector " +
    "or a delay; each PDF kept until the resource ends, downloadable by signed link. A failed render is " +
    "not charged.",
  createSchema: pdfCreate,
  example: {},
  migrations: [{ sql: TABLES }],
  dayPriceMicro: 1000,
  defaultTtlSeconds: 7 * 86400,
  maxTtlSeconds: 90 * 86400,
  limits: {
    max_html_bytes: MAX_HTML_BYTES,
    max_renders: MAX_RENDERS,
    render_timeout_seconds: RENDER_TIMEOUT_MS / 1000,
  },
  usage: (store) => usage(store),
  exportData: (store) => ({ renders: renders.all(store) }),
  ops: [
    kind.op({
      name: "render",
      method: "post",
      path: "/renders",
      summary: "Render HTML or a URL to PDF; answers when it is done (a failure or timeout is not charged)",
      priceMicro: 5000,
      input: renderInput,
      output: renderView,
      maxBodyBytes: MAX_HTML_BYTES + 200_000,
      errors: [413, 503, 504, 507],
      example: {
        input: {
          html: "<h1>Invoice 42</h1><p>Total: 12.00 EUR</p>",
          paper: "a4",
          margins: { top: 0.6, right: 0.6, bottom: 0.6, left: 0.6 },
          footer_html:
            '<div style="font-size:8px;width:100%;text-align:center"><span ' +
            'class="pageNumber"></span>/<span class="totalPages"></span></div>',
          filename: "invoice-42.pdf",
        },
      },
      prepare: (ctx, _config, input) => render(ctx, input),
      run: (store, _config, input, rendered) => record(store, input, rendered),
      discard: renders.discard,
    }),
    ...storedArtifactOps(renders, {
      path: "/renders",
      idPrefix: "pdf_",
      view: renderView,
      page: pageSchema,
      madeBy: "render",
      summaries: { get: "One render: size, pages, sha256, signed link", delete: "Delete a render and its PDF" },
      download: "The PDF (Range honoured)",
      priceMicro: OP_PRICE,
    }),
  ],
});
