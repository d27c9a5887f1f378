/** Request and response shapes of convert; the same schemas validate, type and document. */
import { z } from "@hono/zod-openapi";
import { pageOf } from "../../../openapi/schemas";

export const MAX_DOCUMENT_BYTES = 20_000_000;
export const MAX_CONVERSIONS = 500;

export const convertCreate = z.object({});

export const conversionView = z
  .object({
    conversion_id: z.string(),
    source_format: z
      .string()
      .describe("html, markdown, text, png, jpeg, gif, webp, svg, or the office format (docx, odt, xlsx, pptx, …)."),
    source_bytes: z.int(),
    engine: z
      .enum(["browser-rendering", "gotenberg", "libreoffice"])
      .describe("What made the PDF: the PDF engine for text and images, LibreOffice for office documents."),
    size: z.int().describe("Bytes of the PDF."),
    sha256: z.string(),
    pages: z.int().nullable(),
    created_at: z.string(),
    content_url: z.string().describe("Signed download link of the PDF (no credential), valid until the resource ends."),
  })
  .openapi("Conversion");
export type ConversionView = z.infer<typeof conversionView>;

export const conversionsPage = pageOf(conversionView).openapi("ConversionPage");
