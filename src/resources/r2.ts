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
