/**
 * Opaque list cursors (docs/api.md#requests-and-conventions): the position after the last item of a page,
 * newest first. Keyset, not offset, so a page stays right while reports arrive.
 */
import { fromBase64Url, toBase64Url } from "../bytes";
import { AppError } from "../http/errors";

export interface Position {
  createdAt: number;
  id: string;
}

export function encodeCursor(p: Position): string {
  return toBase64Url(new TextEncoder().encode(`${p.createdAt}.${p.id}`));
}

export function decodeCursor(cursor: string): Position {
  let text = "";
  try {
    // bytes that are not UTF-8 become U+FFFD, which the pattern refuses
    text = new TextDecoder().decode(fromBase64Url(cursor));
  } catch {
    // falls through to the refusal below
  }
  const match = /^(\d{1,15})\.([A-Za-z0-9_]{1,80})$/.exec(text);
  if (!match?.[1] || !match[2]) {
    throw new AppError("validation_failed", "cursor: not a cursor this list returned.", {
      errors: [{ path: "cursor", message: "not a cursor this list returned" }],
    });
  }
  return { createdAt: Number(match[1]), id: match[2] };
}
