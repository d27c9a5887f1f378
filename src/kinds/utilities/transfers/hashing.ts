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

/** Digests of transfers under way in this isolate, by transfer id; a few dozen at most (a lost one costs only a read-back). */
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

/** The SHA-256 of a whole stream (the destination read back when its digest was lost), read a chunk at a time as the digest takes it. */
export async function digestOf(body: ReadableStream<Uint8Array>): Promise<string> {
  const digest = new Digest();
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return digest.hex();
    await digest.update(value);
  }
}

/**
 * Moves `body` into `sink`, through `digest` when there is one, one chunk at a time: the next is
 * read only once the sink took the last, so what is held never grows past a chunk. (A TransformStream
 * in between measured three times slower in workerd, and its queues let the source run ahead.)
 */
export async function pump(body: ReadableStream<Uint8Array>, sink: WritableStream<Uint8Array>, digest: Digest | null): Promise<void> {
  const reader = body.getReader();
  const writer = sink.getWriter();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (digest) await digest.update(value);
      await writer.write(value);
    }
    await writer.close();
  } catch (err) {
    await Promise.all([reader.cancel(err).catch(() => undefined), writer.abort(err).catch(() => undefined)]);
    throw err;
  }
}
