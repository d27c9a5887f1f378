/** Request and response shapes of pdf; the same schemas validate, type and document. */
import { z } from "@hono/zod-openapi";
import { fileName } from "../../../http/header-fields";
import { exactlyOneOf, httpUrl, multiLine, pageOf, singleLine } from "../../../openapi/schemas";

export const MAX_HTML_BYTES = 5_000_000;
export const MAX_TEMPLATE_BYTES = 64 * 1024;
export const MAX_RENDERS = 1000;

/** Paper sizes in inches (width × height, portrait), as Gotenberg and Chrome name them. */
export const PAPER: Record<string, [number, number]> = {
  letter: [8.5, 11],
  legal: [8.5, 14],
  tabloid: [11, 17],
  ledger: [17, 11],
  a3: [11.7, 16.54],
  a4: [8.27, 11.7],
  a5: [5.83, 8.27],
  a6: [4.13, 5.83],
};

const inches = z.number().min(0).max(4);
const template = (where: string) =>
  multiLine(MAX_TEMPLATE_BYTES)
    .optional()
    .describe(
      `HTML printed at the ${where} of every page (Chrome's template: \`<span class="pageNumber">\`, ` +
        `\`totalPages\`, \`date\`, \`title\`, \`url\`; inline styles only; give it a font-size).`,
    );

export const renderInput = exactlyOneOf(
  z.object({
    html: multiLine(MAX_HTML_BYTES)
      .optional()
      .describe(
        `The document (at most ${MAX_HTML_BYTES} bytes). What it loads from elsewhere is loaded by the engine.`,
      ),
    url: httpUrl
      .optional()
      .describe("A page to print: http(s) to a public address (checked like every outbound call)."),
    paper: z.enum(Object.keys(PAPER) as [string, ...string[]]).default("a4"),
    landscape: z.boolean().default(false),
    margins: z
      .object({
        top: inches.default(0.4),
        right: inches.default(0.4),
        bottom: inches.default(0.4),
        left: inches.default(0.4),
      })
      .strict()
      .default({ top: 0.4, right: 0.4, bottom: 0.4, left: 0.4 })
      .describe("Inches."),
    print_background: z.boolean().default(false).describe("Print background colours and images."),
    scale: z.number().min(0.1).max(2).default(1),
    header_html: template("top"),
    footer_html: template("bottom"),
    wait_for_selector: singleLine(500)
      .optional()
      .describe("Print once an element matching this CSS selector is visible (a chart drawn by script)."),
    wait_ms: z.int().min(0).max(10_000).default(0).describe("Then wait this long before printing."),
    filename: fileName.optional().describe("The download's file name (default document.pdf)."),
  }),
  ["html", "url"],
);
export type RenderInput = z.infer<typeof renderInput>;

export const renderView = z
  .object({
    render_id: z.string(),
    source: z.enum(["html", "url"]),
    url: z.string().nullable(),
    paper: z.string(),
    landscape: z.boolean(),
    size: z.int().describe("Bytes of the PDF."),
    sha256: z.string(),
    pages: z.int().nullable().describe("Pages, as the PDF's page tree counts them."),
    engine: z.enum(["browser-rendering", "gotenberg"]).describe("Which engine rendered it (src/engines/pdf.ts)."),
    created_at: z.string(),
    content_url: z.string().describe("Signed download link of the PDF (no credential), valid until the resource ends."),
  })
  .openapi("PdfRender");
export type RenderView = z.infer<typeof renderView>;

export const rendersPage = pageOf(renderView).openapi("PdfRenderPage");
export const pdfCreate = z.object({});
