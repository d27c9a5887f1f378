/**
 * A transfer's work, done by the resource's alarm in runs of at most RUN_BUDGET_MS: the start
 * (an op) checks both ends and begins the destination's upload; each run then copies parts in
 * order (a ranged read of the source into one part of the destination, through the digest), and
 * the last run completes the upload and hands an object destination its new content. A run
 * records what it finished in one transaction; a process that dies mid-run loses only the part
 * under way, which the next run sends again.
 */
import { randomId } from "../../../auth/ids";
import { AppError } from "../../../http/errors";
import type { PrepareContext } from "../../../kind/kind";
import { MAX_OBJECT_BYTES } from "../../memory/objects/schema";
import {
  abortUpload,
  beginUpload,
  completeUpload,
  handOver,
  probe,
  read,
  readBack,
  resolve,
  sendPart,
  sendWhole,
  shown,
  takesParts,
  type DonePart,
} from "./endpoints";
import { Digest, digestFrom, digestOf, forgetDigest } from "./hashing";
import { MAX_PARTS, MAX_TRANSFER_BYTES, PART_BYTES, type StartInput } from "./schema";
import { checkRoom, endpointsOf, partsOf, type Row, type Started } from "./store";
import { nextRunning, type Stepped } from "./runs";

/** How long one run copies parts before it records them and lets the alarm call the next. */
export const RUN_BUDGET_MS = 20_000;

const MIB = 1024 * 1024;

/** Checks both ends, learns the source's size, begins the destination's upload: all before the start is charged. */
export async function start(ctx: PrepareContext, input: StartInput): Promise<Started> {
  checkRoom(ctx.sql);
  const source = await resolve(ctx.env, input.source, "source");
  const destination = await resolve(ctx.env, input.destination, "destination");
  const info = await probe(ctx.env, source);
  const limit = destination.type === "object" ? MAX_OBJECT_BYTES : MAX_TRANSFER_BYTES;
  if (info.size > limit)
    throw new AppError(
      "payload_too_large",
      `The source holds ${info.size} bytes; this destination takes at most ${limit}.`,
    );
  // Parts of whole MiBs, 10,000 at most (S3's limit).
  const partBytes = Math.max(PART_BYTES, Math.ceil(info.size / MAX_PARTS / MIB) * MIB);
  const parted = info.ranged && takesParts(destination) && info.size > 0;
  const contentType = input.content_type ?? info.contentType ?? "application/octet-stream";
  const uploadId = parted ? await beginUpload(ctx.env, destination, contentType) : null;
  ctx.stillHere();
  return {
    transferId: randomId("trf_"),
    label: input.label ?? null,
    source,
    destination,
    sourceView: shown(source),
    destinationView: shown(destination),
    contentType,
    size: info.size,
    partBytes: parted ? partBytes : info.size,
    partsTotal: parted ? Math.ceil(info.size / partBytes) : 1,
    ranged: parted,
    uploadId,
    sourceEtag: info.etag,
  };
}

/** Undoes a start that was refused after its upload began. */
export async function discardStart(ctx: PrepareContext, started: Started): Promise<void> {
  if (started.uploadId) await abortUpload(ctx.env, started.destination, started.uploadId).catch(() => undefined);
}

/** One run of the oldest running transfer; null when none is due. */
export async function run(ctx: PrepareContext): Promise<Stepped | null> {
  const row = nextRunning(ctx.sql, ctx.now);
  if (!row) return null;
  const result: Stepped = {
    transferId: row.transfer_id,
    attempts: row.attempts,
    parts: [],
    completed: null,
    error: null,
  };
  try {
    if (row.ranged) await copyParts(ctx, row, result);
    else await copyWhole(ctx, row, result);
  } catch (err) {
    const permanent = err instanceof AppError && err.status < 500;
    result.error = { message: err instanceof Error ? err.message : String(err), permanent };
  }
  return result;
}

async function copyParts(ctx: PrepareContext, row: Row, result: Stepped): Promise<void> {
  const { source, destination } = endpointsOf(ctx.env, row);
  const done: DonePart[] = partsOf(ctx.sql, row.transfer_id);
  const digest = digestFrom(row.transfer_id, Math.min(done.length * row.part_bytes, row.bytes_total));
  const deadline = Date.now() + RUN_BUDGET_MS;
  for (let n = done.length + 1; n <= row.parts_total && Date.now() < deadline; n++) {
    const start = (n - 1) * row.part_bytes;
    const end = Math.min(n * row.part_bytes, row.bytes_total) - 1;
    const body = await read(ctx.env, source, start, end, true);
    const etag = await sendPart(ctx.env, destination, row.upload_id!, n, body, end - start + 1, digest);
    const part = { part_number: n, size: end - start + 1, etag };
    result.parts.push(part);
    done.push(part);
    ctx.stillHere();
  }
  if (done.length < row.parts_total) return;
  const etag = await completeUpload(ctx.env, destination, row.upload_id!, done, row.bytes_total);
  forgetDigest(row.transfer_id);
  // The digest saw every byte only if this process moved them all; otherwise what the destination now holds is hashed.
  const sha256 =
    digest?.taken === row.bytes_total
      ? await digest.hex()
      : await digestOf(await readBack(ctx.env, destination, row.bytes_total));
  await handOver(ctx.env, destination, row.bytes_total, sha256, row.content_type, row.transfer_id);
  result.completed = { etag, sha256 };
}

/** A source without ranges, or a URL destination: the whole body in one request (a failure starts it again). */
async function copyWhole(ctx: PrepareContext, row: Row, result: Stepped): Promise<void> {
  const { source, destination } = endpointsOf(ctx.env, row);
  const digest = new Digest();
  const body =
    row.bytes_total === 0
      ? new ReadableStream<Uint8Array>({ start: (c) => c.close() })
      : await read(ctx.env, source, 0, row.bytes_total - 1, false);
  const etag = await sendWhole(ctx.env, destination, body, row.bytes_total, row.content_type, digest);
  const sha256 = await digest.hex();
  await handOver(ctx.env, destination, row.bytes_total, sha256, row.content_type, row.transfer_id);
  result.completed = { etag, sha256 };
}

/**
 * A cancelled transfer's upload was aborted: resuming it begins a new one (before the resume is charged; aborted if it
 * is refused).
 */
export async function reopen(ctx: PrepareContext, row: Row): Promise<Row> {
  if (row.status !== "cancelled" || !row.ranged) return row;
  return { ...row, upload_id: await beginUpload(ctx.env, endpointsOf(ctx.env, row).destination, row.content_type) };
}

/**
 * Aborts a transfer's open upload at its destination (a cancel, the resource's end); the store expires what this
 * cannot.
 */
export async function abortOpen(ctx: PrepareContext, row: Row): Promise<void> {
  if (!row.upload_id) return;
  const { destination } = endpointsOf(ctx.env, row);
  await abortUpload(ctx.env, destination, row.upload_id).catch((err) =>
    console.error(`transfer ${row.transfer_id}: abort failed`, err),
  );
}
