/**
 * Cursor pagination of list results (server/utilities/pagination). The cursor is opaque to the
 * client and holds only an offset: the list itself is the same on every request (the toolsets
 * ride the URL), so nothing about a client is remembered between pages.
 */
import { z } from "@hono/zod-openapi";
import { RPC_ERRORS, RpcFault } from "./jsonrpc";

/** At most this many items a page: the default tool list is one page; `?toolsets=all` is a few. */
export const PAGE_SIZE = 100;

const PREFIX = "o:";

const encode = (offset: number) => btoa(`${PREFIX}${offset}`).replace(/=+$/, "");

function decode(cursor: string, total: number): number {
  let text: string;
  try {
    text = atob(cursor);
  } catch {
    text = "";
  }
  const offset = text.startsWith(PREFIX) ? Number(text.slice(PREFIX.length)) : NaN;
  if (!Number.isInteger(offset) || offset <= 0 || offset >= total) {
    throw new RpcFault(
      RPC_ERRORS.invalid_params,
      "Invalid params: cursor is not one this server handed out (start again without a cursor).",
    );
  }
  return offset;
}

/** The params of every list method: an optional cursor (and `_meta`, read elsewhere). */
export const listParams = z
  .object({ cursor: z.string().max(200).optional() })
  .loose()
  .optional();

export function page<T>(items: T[], cursor: string | undefined): { items: T[]; nextCursor?: string } {
  const start = cursor === undefined ? 0 : decode(cursor, items.length);
  const end = start + PAGE_SIZE;
  return { items: items.slice(start, end), ...(end < items.length ? { nextCursor: encode(end) } : {}) };
}
