/**
 * What a conversion takes, by the upload's Content-Type: text and images become an HTML page the
 * PDF engine prints; office documents go to LibreOffice, named by their extension. The bytes are
 * checked against the type they claim (a declared type is not trusted further than that).
 */
import { toBase64, utf8OrNull } from "../../../bytes";
import { AppError } from "../../../http/errors";
import { sniff } from "../../../http/sniff";
import { escapeHtml, htmlDocument } from "../../../site/layout";
import { safeMarkdown } from "../../../site/markdown";

export const OFFICE: Record<string, string> = {
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
  "application/msword": "doc",
  "application/vnd.oasis.opendocument.text": "odt",
  "application/rtf": "rtf",
  "text/rtf": "rtf",
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
  "application/vnd.ms-excel": "xls",
  "application/vnd.oasis.opendocument.spreadsheet": "ods",
  "application/vnd.openxmlformats-officedocument.presentationml.presentation": "pptx",
  "application/vnd.ms-powerpoint": "ppt",
  "application/vnd.oasis.opendocument.presentation": "odp",
};
const IMAGES = ["image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml"];
const TEXT = ["text/html", "text/markdown", "text/plain"];

export const ACCEPTED = [...TEXT, ...IMAGES, ...Object.keys(OFFICE)];

/** What the engines are given: an HTML page to print, or an office document and its extension. */
export type Source = { format: string; html: string } | { format: string; office: Uint8Array; extension: string };

const invalid = (detail: string) =>
  new AppError("validation_failed", detail, { errors: [{ path: "body", message: detail }] });

/** An image is what it claims by its magic number (SVG, being text, by starting as markup). */
function imageMatches(type: string, b: Uint8Array): boolean {
  if (type === "image/svg+xml")
    return /^\s*</.test(new TextDecoder().decode(b.subarray(0, 256)).replace(/^\uFEFF/, ""));
  return sniff(b) === type.slice("image/".length);
}

function text(bytes: Uint8Array): string {
  const decoded = utf8OrNull(bytes);
  if (decoded === null) throw invalid("The text is not UTF-8.");
  return decoded;
}

const page = (title: string, body: string) => htmlDocument({ title, description: "", body });

export function sourceOf(contentType: string, bytes: Uint8Array): Source {
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  if (bytes.length === 0) throw invalid("The document is empty.");
  if (type === "text/html") return { format: "html", html: text(bytes) };
  if (type === "text/markdown")
    return { format: "markdown", html: page("Document", `<main class="wrap">${safeMarkdown(text(bytes))}</main>`) };
  if (type === "text/plain")
    return {
      format: "text",
      html: page(
        "Document",
        `<pre style="white-space: pre-wrap; border: 0; background: none; font-size: 11pt">` +
          `${escapeHtml(text(bytes))}</pre>`,
      ),
    };
  if (IMAGES.includes(type)) {
    if (!imageMatches(type, bytes)) throw invalid(`The bytes are not a ${type} image.`);
    const img =
      `<img alt="" src="data:${type};base64,${toBase64(bytes)}" style="display:block; max-width:100%; ` +
      `max-height:95vh; margin:auto">`;
    return {
      format: type.slice("image/".length).replace("+xml", ""),
      html: `<!doctype html><html><body style="margin:0">${img}</body></html>`,
    };
  }
  const extension = OFFICE[type];
  if (!extension)
    throw new AppError("unsupported_media_type", `Send one of: ${ACCEPTED.join(", ")} (as the Content-Type).`);
  // The OOXML and OpenDocument formats are zip packages; the older ones are not.
  if (/^(docx|xlsx|pptx|odt|ods|odp)$/.test(extension) && sniff(bytes) !== "zip")
    throw invalid(`The bytes are not a .${extension} document (not a zip package).`);
  return { format: extension, office: bytes, extension };
}
