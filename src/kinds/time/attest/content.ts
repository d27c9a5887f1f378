/**
 * The body inline in an answer: as a string when it is text an agent can read
 * directly (a textual content type and valid UTF-8), else as base64, so the
 * bytes survive JSON exactly and their SHA-256 can be checked either way.
 */
import { toBase64 } from "../../../bytes";
import { INLINE_MAX_BYTES } from "./schema";

export type InlineContent = { encoding: "text" | "base64"; data: string } | null;

/** What a fetch kept: its id, the stored body's key and size, the signed receipt, and the body inline when small. */
export interface Fetched {
  fetchId: string;
  key: string;
  jws: string;
  size: number;
  contentType: string | null;
  content: InlineContent;
}

const TEXTUAL =
  /^(text\/|application\/(json|xml|javascript|ecmascript|x-www-form-urlencoded|ld\+json)|[^;]*\+(json|xml))/i;

/** A declared charset other than UTF-8 would make the decoded string lie about the bytes. */
function declaresOtherCharset(contentType: string): boolean {
  const charset = /;\s*charset="?([^";\s]+)/i.exec(contentType)?.[1];
  return charset !== undefined && !/^utf-?8$/i.test(charset);
}

export function inlineContent(bytes: Uint8Array, contentType: string | null): InlineContent {
  if (bytes.length > INLINE_MAX_BYTES) return null;
  if (contentType && TEXTUAL.test(contentType.trim()) && !declaresOtherCharset(contentType)) {
    try {
      // fatal: invalid UTF-8 falls back to base64; ignoreBOM: a leading BOM stays in the string, so the bytes
      // round-trip.
      return { encoding: "text", data: new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes) };
    } catch {
      // not UTF-8 after all
    }
  }
  return { encoding: "base64", data: toBase64(bytes) };
}
