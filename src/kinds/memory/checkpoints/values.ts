/**
 * The asynchronous steps of checkpoints, run by the resource's Durable Object
 * outside any transaction: a save encodes and hashes its value and, when it is
 * large, writes it to R2 first (refused or losing saves have it removed by
 * `discardSave`); a read fetches an R2-held value. Reads resolve their row here
 * too, so the value and its metadata come from the same moment.
 */
import { digestHex } from "../../../bytes";
import { AppError } from "../../../http/errors";
import type { PrepareContext } from "../../../kind/kind";
import { encodeValue, newCheckpointId, objectKey } from "./content";
import { checkSave, checkpointById, existingThread, latestOf, type CheckpointRow, type PreparedSave } from "./store";
import { INLINE_MAX_BYTES, MAX_VALUE_BYTES, type SaveInput } from "./schema";

/** Reads that lose their R2 object to a concurrent prune try the then-latest again, this often. */
const READ_ATTEMPTS = 3;

export async function prepareSave(ctx: PrepareContext, input: SaveInput): Promise<PreparedSave> {
  const { encoding, contentType, bytes } = encodeValue(input);
  if (bytes.length > MAX_VALUE_BYTES) {
    throw new AppError(
      "payload_too_large",
      `A checkpoint may have at most ${MAX_VALUE_BYTES} bytes; this one has ${bytes.length}.`,
    );
  }
  checkSave(ctx.sql, input);
  const checkpointId = newCheckpointId();
  const sha256 = await digestHex(bytes);
  const base = { checkpointId, encoding, contentType, size: bytes.length, sha256 };
  if (bytes.length <= INLINE_MAX_BYTES) return { ...base, inline: bytes, key: null };
  const key = objectKey(ctx.resourceId, checkpointId);
  await ctx.env.BUCKET.put(key, bytes, {
    // attachment: an agent's bytes served from our origin must never render as a page.
    httpMetadata: { contentType, contentDisposition: `attachment; filename="${checkpointId}"` },
    sha256, // R2 refuses the write if the bytes it got differ
  });
  return { ...base, inline: null, key };
}

export async function discardSave(ctx: PrepareContext, prepared: PreparedSave): Promise<void> {
  if (prepared.key) await ctx.env.BUCKET.delete(prepared.key);
}

export interface ReadCheckpoint {
  row: CheckpointRow;
  /** The value's bytes; null when not asked for. */
  bytes: Uint8Array | null;
}

/** The row's value, or null when its R2 object is gone (pruned or deleted since the row was read). */
async function valueOf(ctx: PrepareContext, row: CheckpointRow): Promise<Uint8Array | null> {
  if (row.inline) return new Uint8Array(row.inline);
  const object = await ctx.env.BUCKET.get(row.object_key!);
  return object ? new Uint8Array(await object.arrayBuffer()) : null;
}

export async function readById(
  ctx: PrepareContext,
  checkpointId: string,
  includeValue: boolean,
): Promise<ReadCheckpoint> {
  const row = checkpointById(ctx.sql, checkpointId);
  const bytes = row && includeValue ? await valueOf(ctx, row) : null;
  if (!row || (includeValue && !bytes)) {
    throw new AppError("not_found", `No checkpoint ${checkpointId} here (never saved, pruned, or its thread deleted).`);
  }
  return { row, bytes };
}

export async function readLatest(ctx: PrepareContext, thread: string, includeValue: boolean): Promise<ReadCheckpoint> {
  for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
    const row = latestOf(ctx.sql, existingThread(ctx.sql, thread));
    if (!row) break;
    if (!includeValue) return { row, bytes: null };
    const bytes = await valueOf(ctx, row);
    if (bytes) return { row, bytes };
  }
  throw new AppError("not_found", `Thread ${JSON.stringify(thread)} has no checkpoint to read right now.`);
}
