/**
 * The asynchronous step of a snapshot, run by the resource's Durable Object
 * outside any transaction (a timer's `prepare`, or POST /snapshots): fetch
 * through the egress guard, hash, and keep the bytes in R2. A fetch that fails
 * is a result to record, never a throw: a throw would make the alarm retry the
 * same tick every minute instead of recording the outage and moving on.
 *
 * A fetch whose content a kept snapshot already holds reuses that object, so an
 * unchanged page costs no R2 write and N identical snapshots hold one object.
 * Content not held yet goes to a key of this fetch's own
 * (`{id}/snapshots/{sha256}-{random}`): undoing a fetch then deletes only what it
 * wrote itself, never an object a concurrent fetch of the same page recorded.
 */
import { utf8OrNull } from "../../../bytes";
import type { PrepareContext } from "../../../kind/kind";
import { AppError } from "../../../http/errors";
import { fetchGuarded } from "../../../delivery/fetch-guarded";
import { TEXTUAL, compareBasis } from "./compare";
import { MAX_BODY_BYTES, RECORDED_HEADERS, type SnapshotConfig } from "./schema";

/** What `fire`/`run` records; the body itself stays in R2. */
export interface Fetched {
  fetchedAt: number;
  durationMs: number;
  status: number | null;
  error: string | null;
  finalUrl: string | null;
  headers: Record<string, string>;
  contentType: string | null;
  size: number | null;
  sha256: string | null;
  /** What `changed` compares (compare.ts); null for a failed fetch. */
  compareSha256: string | null;
  selectedText: string | null;
  key: string | null;
  /** This step wrote `key` (rather than finding it already held), so undoing it may delete it. */
  wrote: boolean;
}

const newObjectKey = (resourceId: string, sha256: string) => `${resourceId}/snapshots/${sha256}-${crypto.randomUUID()}`;

/** The object of a kept snapshot with this content, if any. */
function heldContent(sql: SqlStorage, sha256: string): string | null {
  return (
    sql
      .exec<{ object_key: string }>(
        "SELECT object_key FROM snapshots WHERE sha256 = ? AND object_key IS NOT NULL LIMIT 1",
        sha256,
      )
      .toArray()[0]?.object_key ?? null
  );
}

/** Whether a kept snapshot points at `key`: then its object is in R2 and must stay. */
export function held(sql: SqlStorage, key: string): boolean {
  return sql.exec("SELECT 1 FROM snapshots WHERE object_key = ? LIMIT 1", key).toArray().length > 0;
}

export async function takeSnapshot(ctx: PrepareContext, config: SnapshotConfig): Promise<Fetched> {
  const started = Date.now();
  const failed = (error: string): Fetched => ({
    fetchedAt: started,
    durationMs: Date.now() - started,
    status: null,
    error,
    finalUrl: null,
    headers: {},
    contentType: null,
    size: null,
    sha256: null,
    compareSha256: null,
    selectedText: null,
    key: null,
    wrote: false,
  });
  // Lowercase names, so a caller's user-agent replaces the service's default instead of joining it.
  const headers = Object.fromEntries(Object.entries(config.headers).map(([k, v]) => [k.toLowerCase(), v]));
  let answer;
  try {
    answer = await fetchGuarded(ctx.env, config.url, { headers, maxBytes: MAX_BODY_BYTES });
  } catch (err) {
    if (err instanceof AppError) return failed(err.detail);
    throw err;
  }
  const contentType = answer.headers["content-type"] ?? null;
  // Reads only: a row holding this content means its object is there.
  ctx.stillHere();
  const existing = heldContent(ctx.sql, answer.sha256);
  const wrote = existing === null;
  const key = existing ?? newObjectKey(ctx.resourceId, answer.sha256);
  if (wrote) {
    await ctx.env.BUCKET.put(key, answer.body, {
      // attachment: a stranger's page served from our origin must not render as one of our documents.
      httpMetadata: {
        contentType: contentType ?? "application/octet-stream",
        contentDisposition: `attachment; filename="snapshot-${answer.sha256.slice(0, 16)}"`,
      },
      sha256: answer.sha256, // R2 refuses the write if the bytes it got differ
    });
  }
  const ok = answer.status >= 200 && answer.status < 300;
  const compared = ok ? await compareBasis(config, answer.body, answer.sha256, contentType) : null;
  return {
    fetchedAt: started,
    durationMs: Date.now() - started,
    status: answer.status,
    error: ok ? null : `the target answered HTTP ${answer.status}`,
    finalUrl: answer.url,
    headers: Object.fromEntries(
      RECORDED_HEADERS.filter((h) => answer.headers[h] !== undefined).map((h) => [h, answer.headers[h]!]),
    ),
    contentType,
    size: answer.body.length,
    sha256: answer.sha256,
    compareSha256: compared?.compareSha256 ?? null,
    selectedText: compared?.selectedText ?? null,
    key,
    wrote,
  };
}

/** Undoes a step whose result will not be recorded: the object it wrote (under its own key) goes. */
export async function discardSnapshot(ctx: PrepareContext, fetched: Fetched): Promise<void> {
  if (fetched.key && fetched.wrote) await ctx.env.BUCKET.delete(fetched.key);
}

/** The stored body as text, for GET /snapshot: only text that decodes as UTF-8, and only small enough. */
export async function readText(ctx: PrepareContext, key: string, contentType: string | null): Promise<string | null> {
  if (!contentType || !TEXTUAL.test(contentType)) return null;
  const object = await ctx.env.BUCKET.get(key);
  if (!object) return null; // the resource is ending: its objects are being deleted
  return utf8OrNull(new Uint8Array(await object.arrayBuffer()));
}
