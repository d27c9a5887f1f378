/** R2 helpers: a resource's bulk bytes live under the prefix `{resource id}/`. */
import { digestHex, toHex } from "../bytes";

/** Deletes every object under `prefix` but those `spared`, a page at a time. */
export async function deletePrefix(
  bucket: R2Bucket,
  prefix: string,
  spared: ReadonlySet<string> = new Set(),
): Promise<void> {
  for (let cursor: string | undefined; ;) {
    const page = await bucket.list({ prefix, cursor, limit: 1000 });
    const doomed = page.objects.map((o) => o.key).filter((key) => !spared.has(key));
    if (doomed.length) await bucket.delete(doomed);
    if (!page.truncated) return;
    cursor = page.cursor;
  }
}

export interface Stored {
  size: number;
  /** Hex SHA-256 of the bytes as stored. */
  sha256: string;
}

/** A pass-through stream that hashes what crosses it; `sha256` settles once the stream has closed. */
export function hashingTap(): { tap: TransformStream<Uint8Array, Uint8Array>; sha256: () => Promise<string> } {
  const digest = new crypto.DigestStream("SHA-256");
  const hashing = digest.getWriter();
  const tap = new TransformStream<Uint8Array, Uint8Array>({
    async transform(chunk, controller) {
      await hashing.write(chunk);
      controller.enqueue(chunk);
    },
    async flush() {
      await hashing.close();
    },
  });
  return { tap, sha256: async () => toHex(new Uint8Array(await digest.digest)) };
}

/**
 * `body` hashed and held to exactly `length` bytes, as R2 needs the length of a streamed value up front
 * (a put or a multipart part): a body that ends short or runs long errors `done` and the write.
 */
export function sizedAndHashed(
  body: ReadableStream<Uint8Array>,
  length: number,
): { stream: ReadableStream<Uint8Array>; done: Promise<void>; sha256: () => Promise<string> } {
  const { tap, sha256 } = hashingTap();
  const sized = new FixedLengthStream(length);
  const done = body.pipeThrough(tap).pipeTo(sized.writable);
  return { stream: sized.readable, done, sha256 };
}

/**
 * Streams `body` into R2 under `key`, hashing it on the way: the bytes are never held
 * whole. R2 needs the length up front; a body that ends short or runs long fails the put.
 */
export async function putStream(
  bucket: R2Bucket,
  key: string,
  body: ReadableStream<Uint8Array>,
  length: number,
  options: R2PutOptions = {},
): Promise<Stored> {
  if (length === 0) {
    // An empty value is stored as such: a zero-length stream would leave the put waiting for bytes that never come.
    await body.cancel().catch(() => undefined);
    const object = await bucket.put(key, new Uint8Array(0), options);
    if (!object) throw new Error(`R2 refused ${key}`);
    return { size: 0, sha256: await digestHex(new Uint8Array(0)) };
  }
  const value = sizedAndHashed(body, length);
  const [object] = await Promise.all([bucket.put(key, value.stream, options), value.done]);
  if (!object) throw new Error(`R2 refused ${key}`);
  return { size: object.size, sha256: await value.sha256() };
}
