/** R2 helpers: a resource's bulk bytes live under the prefix `{resource id}/`. */

/** Deletes every object under `prefix`, a page at a time. */
export async function deletePrefix(bucket: R2Bucket, prefix: string): Promise<void> {
  for (let cursor: string | undefined; ; ) {
    const page = await bucket.list({ prefix, cursor, limit: 1000 });
    if (page.objects.length) await bucket.delete(page.objects.map((o) => o.key));
    if (!page.truncated) return;
    cursor = page.cursor;
  }
}

export interface Stored {
  size: number;
  /** Hex SHA-256 of the bytes as stored. */
  sha256: string;
}

/**
 * Streams `body` into R2 under `key`, hashing it on the way: the bytes are never held
 * whole. R2 needs the length up front; a body that ends short or runs long fails the put.
 */
export async function putStream(bucket: R2Bucket, key: string, body: ReadableStream<Uint8Array>, length: number, options: R2PutOptions = {}): Promise<Stored> {
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
  const sized = new FixedLengthStream(length);
  const piped = body.pipeThrough(tap).pipeTo(sized.writable);
  const [object] = await Promise.all([bucket.put(key, sized.readable, options), piped]);
  if (!object) throw new Error(`R2 refused ${key}`);
  const hash = new Uint8Array(await digest.digest);
  return { size: object.size, sha256: Array.from(hash, (b) => b.toString(16).padStart(2, "0")).join("") };
}
