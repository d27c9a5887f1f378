/**
 * The SHA-256 of everything a transfer moves, hashed natively (`crypto.DigestStream`) as the bytes
 * go by. A transfer moves its parts over many alarm runs, and a DigestStream's state cannot be
 * saved, so the digest stays in the object's memory between runs, with the count of bytes it has
 * taken. A run goes on with it only when that count is where the run starts; otherwise (the process
 * was replaced between runs, or a part failed halfway through) the parts still move, and at the end
 * the whole is hashed once more from what the destination holds.
 *
 * (The digest used to be a JavaScript SHA-256 whose state was stored at each part boundary: under
 * the local runtime it hashed at about 4 MB/s, slower than the copy, and the workerd's memory grew
 * with the bytes moved. See bench/README.md, "Transfer throughput".)
 */
import { toHex } from "../../../bytes";

export class Digest {
  private readonly stream = new crypto.DigestStream("SHA-256");
  private readonly writer = this.stream.getWriter();
  /** Bytes hashed so far, counted as they are taken: a part that failed halfway leaves it off any part boundary. */
  taken = 0;

  async update(bytes: Uint8Array): Promise<void> {
    this.taken += bytes.byteLength;
    await this.writer.write(bytes);
  }

  async hex(): Promise<string> {
    await this.writer.close();
    return toHex(new Uint8Array(await this.stream.digest));
  }
}

/**
 * Digests of transfers under way in this isolate, by transfer id; a few dozen at most (a lost one costs only a
 * read-back).
 */
const underWay = new Map<string, Digest>();
const MAX_UNDER_WAY = 64;

/**
 * The digest to go on with for a run starting at byte `offset` of a transfer: a new one at 0, the
 * one kept if it has taken exactly `offset` bytes, else null (the bytes before are hashed at the end).
 */
export function digestFrom(transferId: string, offset: number): Digest | null {
  if (offset > 0) {
    const kept = underWay.get(transferId);
    return kept?.taken === offset ? kept : null;
  }
  const fresh = new Digest();
  underWay.delete(transferId);
  underWay.set(transferId, fresh);
  if (underWay.size > MAX_UNDER_WAY) underWay.delete(underWay.keys().next().value!);
  return fresh;
}

/** Lets a transfer's digest go (its last part moved, or it stopped). */
export function forgetDigest(transferId: string): void {
  underWay.delete(transferId);
}

/** Forgets every digest, as a new process would: for tests of the read-back. */
export function forgetAllDigests(): void {
  underWay.clear();
}

/**
 * The SHA-256 of a whole stream (the destination read back when its digest was lost), read a chunk at a time as the
 * digest takes it.
 */
export async function digestOf(body: ReadableStream<Uint8Array>): Promise<string> {
  const digest = new Digest();
  const chunks = chunkReader(body);
  for (let chunk = await chunks.read(); chunk; chunk = await chunks.read()) await digest.update(chunk);
  return digest.hex();
}

/**
 * Moves `body` into `sink`, through `digest` when there is one, one chunk at a time: the next is
 * read only once the sink took the last, so what is held never grows past a chunk. (A TransformStream
 * in between measured three times slower in workerd, and its queues let the source run ahead.)
 */
export async function pump(
  body: ReadableStream<Uint8Array>,
  sink: WritableStream<Uint8Array>,
  digest: Digest | null,
): Promise<void> {
  const chunks = chunkReader(body);
  const writer = sink.getWriter();
  try {
    for (let chunk = await chunks.read(); chunk; chunk = await chunks.read()) {
      if (digest) await digest.update(chunk);
      await writer.write(chunk);
    }
    await writer.close();
  } catch (err) {
    await Promise.all([chunks.cancel(err).catch(() => undefined), writer.abort(err).catch(() => undefined)]);
    throw err;
  }
}

/** The buffer a byte stream is read into, reused from chunk to chunk. */
const CHUNK_BYTES = 256 * 1024;

/**
 * Reads `body` a chunk at a time (null at its end). A byte stream (a fetch or R2 body) is read into one
 * buffer, reused once the caller asks for the next chunk (it has written the last one by then: a write
 * to a runtime stream resolves once the bytes are taken): a buffer per chunk from the runtime made
 * garbage at half the rate of the bytes moved, held the isolate's peak at about 145 MiB and halved the
 * throughput (bench/README.md, "Transfer throughput"). Other streams (a body through a JavaScript
 * TransformStream, such as the egress guard's stall watchdog) hand out their own chunks.
 */
function chunkReader(body: ReadableStream<Uint8Array>): {
  read(): Promise<Uint8Array | null>;
  cancel(reason: unknown): Promise<void>;
} {
  let byob: ReadableStreamBYOBReader;
  try {
    byob = body.getReader({ mode: "byob" });
  } catch {
    const reader = body.getReader();
    return { read: async () => (await reader.read()).value ?? null, cancel: (reason) => reader.cancel(reason) };
  }
  let last: Uint8Array | null = null;
  return {
    async read() {
      // A read takes the buffer over (transfers it) and hands it back as the chunk; one the sink kept (detached) is
      // replaced.
      const buffer = last && last.buffer.byteLength > 0 ? last.buffer : new ArrayBuffer(CHUNK_BYTES);
      const { done, value } = await byob.read(new Uint8Array(buffer));
      last = done ? null : (value ?? null);
      return last;
    },
    cancel: (reason) => byob.cancel(reason),
  };
}
