/**
 * convert: a document to PDF (Gotenberg, CloudConvert). HTML, Markdown (rendered safely), plain
 * text and images (PNG, JPEG, GIF, WebP, SVG) are printed by the PDF engine; office documents
 * (DOCX, DOC, ODT, RTF, XLSX, XLS, ODS, PPTX, PPT, ODP) by LibreOffice (src/engines/office.ts). The
 * format is the upload's Content-Type, checked against its bytes. A failed conversion is not charged.
 */
import { rawBodyInput } from "../../../openapi/schemas";
import { storedArtifactOps } from "../../../kind/artifact-ops";
import { kindOf } from "../../../kind/kind";
import { conversions, convert, record, TABLES, usage } from "./store";
import { conversionsPage, conversionView, convertCreate, MAX_CONVERSIONS, MAX_DOCUMENT_BYTES } from "./schema";

const OP_PRICE = 100; // µUSD, $0.0001

const kind = kindOf<Record<string, never>>();

export const convertKind = kind.define({
  kind: "convert",
  family: "utilities",
  title: "Document to PDF",
  summary:
    `A document to PDF (up to ${MAX_DOCUMENT_BYTES} bytes): HTML, Markdown, plain text and images printed ` +
    `by headless Chromium; DOCX, ODT, RTF, XLSX, ODS, PPTX, ODP ` +
    "and the older Office formats by LibreOffice. Each PDF kept until the resource ends, downloadable by " +
    "signed link. A failed conversion is not charged.",
  createSchema: convertCreate,
  example: {},
  migrations: [{ sql: TABLES }],
  dayPriceMicro: 1000,
  defaultTtlSeconds: 7 * 86400,
  maxTtlSeconds: 90 * 86400,
  limits: { max_document_bytes: MAX_DOCUMENT_BYTES, max_conversions: MAX_CONVERSIONS },
  usage: (store) => usage(store),
  exportData: (store) => ({ conversions: conversions.all(store) }),
  ops: [
    kind.op({
      name: "convert",
      method: "put",
      path: "/conversions",
      summary:
        "Convert the document sent as the body (its Content-Type says what it is) to PDF; answers when the PDF is made",
      priceMicro: 5000,
      input: rawBodyInput,
      output: conversionView,
      rawBody: true,
      maxBodyBytes: MAX_DOCUMENT_BYTES,
      errors: [413, 415, 503, 504, 507],
      example: {
        headers: { "content-type": "text/markdown" },
        bytes: "# Minutes\n\n- Budget approved\n- Next meeting on Friday\n",
      },
      prepare: (ctx, _config, input, body) => convert(ctx, input.content_type, body),
      run: (store, _config, _input, converted) => record(store, converted),
      discard: conversions.discard,
    }),
    ...storedArtifactOps(conversions, {
      path: "/conversions",
      idPrefix: "cnv_",
      view: conversionView,
      page: conversionsPage,
      madeBy: "convert",
      summaries: {
        get: "One conversion: source format, size, pages, signed link",
        delete: "Delete a conversion and its PDF",
      },
      download: "The PDF (Range honoured)",
      priceMicro: OP_PRICE,
    }),
  ],
});
