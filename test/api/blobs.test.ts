/** blobs: 100 MB streamed in and out with matching sha256, the size limit, the public link and its download limit. */
import { SELF } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { ORIGIN, balanceOf, buyCredits, call, createResource, json, managed, publicUrl, r2Keys } from "../harness";
import { MAX_BLOB_BYTES } from "../../src/kinds/memory/blobs/schema";
import type { blobs } from "../../src/kinds/memory/blobs";
import type { OpOutput } from "../../src/kind/kind";

const CHUNK = 1 << 20;
let credit: string;

/** `size` bytes of a fixed pattern, produced a chunk at a time (never held whole). */
function pattern(size: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= size) return controller.close();
      const n = Math.min(CHUNK, size - sent);
      const chunk = new Uint8Array(n);
      for (let i = 0; i < n; i++) chunk[i] = (sent + i) % 251;
      sent += n;
      controller.enqueue(chunk);
    },
  });
}

async function sha256Of(stream: ReadableStream<Uint8Array>): Promise<{ hex: string; size: number }> {
  const digest = new crypto.DigestStream("SHA-256");
  let size = 0;
  await stream
    .pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(c, ctl) {
          size += c.length;
          ctl.enqueue(c);
        },
      }),
    )
    .pipeTo(digest);
  return { hex: [...new Uint8Array(await digest.digest)].map((b) => b.toString(16).padStart(2, "0")).join(""), size };
}

/** PUT with a declared length, streamed. */
function upload(
  id: string,
  mgmt: string,
  body: ReadableStream<Uint8Array>,
  length: number,
  type = "application/octet-stream",
) {
  const sized = new FixedLengthStream(length);
  void body.pipeTo(sized.writable).catch(() => undefined);
  return SELF.fetch(`${ORIGIN}/v1/blobs/${id}/content`, {
    method: "PUT",
    body: sized.readable,
    headers: { ...managed(mgmt, credit), "content-type": type, "content-length": String(length) },
  });
}

describe("blobs", () => {
  beforeAll(async () => {
    credit = (await buyCredits(5)).token;
  });

  it("round-trips 100 MB streamed in and out, with the sha256 computed on the way in", async () => {
    const { id, mgmt } = await createResource("blobs", credit);
    const expected = await sha256Of(pattern(MAX_BLOB_BYTES));
    const res = await upload(id, mgmt, pattern(MAX_BLOB_BYTES), MAX_BLOB_BYTES);
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await json(res)).toMatchObject({
      uploaded: true,
      size: MAX_BLOB_BYTES,
      sha256: expected.hex,
      content_type: "application/octet-stream",
    });

    const down = await call("GET", `/v1/blobs/${id}/content`, { headers: managed(mgmt, credit) });
    expect(down.status).toBe(200);
    expect(down.headers.get("content-length")).toBe(String(MAX_BLOB_BYTES));
    expect(await sha256Of(down.body!)).toEqual(expected);

    const range = await call("GET", `/v1/blobs/${id}/content`, {
      headers: { ...managed(mgmt, credit), range: "bytes=1000-1009" },
    });
    expect(range.status).toBe(206);
    expect([...new Uint8Array(await range.arrayBuffer())]).toEqual([...Array(10)].map((_, i) => (1000 + i) % 251));
  });

  it("refuses a range past the end with 416 before charging", async () => {
    const { id, mgmt } = await createResource("blobs", credit);
    const bytes = new TextEncoder().encode("ten bytes!");
    await upload(id, mgmt, new Blob([bytes]).stream(), bytes.length);
    const before = (await balanceOf(credit)).balance_usd;
    const res = await call("GET", `/v1/blobs/${id}/content`, {
      headers: { ...managed(mgmt, credit), range: "bytes=100-" },
    });
    expect(res.status).toBe(416);
    expect(res.headers.get("content-range")).toBe("bytes */10");
    expect((await balanceOf(credit)).balance_usd).toBe(before);
  });

  it("refuses 100 MB + 1 byte with 413, storing and charging nothing", async () => {
    const { id, mgmt } = await createResource("blobs", credit);
    const before = (await balanceOf(credit)).balance_usd;
    const res = await upload(id, mgmt, pattern(MAX_BLOB_BYTES + 1), MAX_BLOB_BYTES + 1);
    expect(res.status).toBe(413);
    expect((await json(res)).code).toBe("payload_too_large");
    expect(await r2Keys(id)).toEqual([]);
    expect((await balanceOf(credit)).balance_usd).toBe(before);
    expect(await json(await call("GET", `/v1/blobs/${id}`, { headers: managed(mgmt, credit) }))).toMatchObject({
      uploaded: false,
    });
  });

  it("refuses an upload without Content-Length, storing and charging nothing", async () => {
    const { id, mgmt } = await createResource("blobs", credit);
    const before = (await balanceOf(credit)).balance_usd;
    const chunked = await SELF.fetch(`${ORIGIN}/v1/blobs/${id}/content`, {
      method: "PUT",
      body: pattern(10),
      headers: managed(mgmt, credit),
    });
    expect(chunked.status).toBe(400);
    expect(await r2Keys(id)).toEqual([]);
    expect((await balanceOf(credit)).balance_usd).toBe(before);
  });

  it("replaces an earlier upload, keeps the type and sha256, and deletes the old bytes", async () => {
    const { id, mgmt } = await createResource("blobs", credit, { content_type: "text/plain; charset=utf-8" });
    const first = new TextEncoder().encode("first version");
    await upload(id, mgmt, new Blob([first]).stream(), first.length);
    const keysAfterFirst = await r2Keys(id);
    const second = new TextEncoder().encode("second version, longer");
    const res = await json<OpOutput<typeof blobs, "upload">>(
      await upload(id, mgmt, new Blob([second]).stream(), second.length, "application/x-ignored"),
    );
    expect(res).toMatchObject({
      size: second.length,
      content_type: "text/plain; charset=utf-8",
      sha256: (await sha256Of(new Blob([second]).stream())).hex,
    });
    const keys = await r2Keys(id);
    expect(keys).toHaveLength(1);
    expect(keys).not.toEqual(keysAfterFirst);
    const down = await call("GET", `/v1/blobs/${id}/content`, { headers: managed(mgmt, credit) });
    expect(down.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(await down.text()).toBe("second version, longer");
    // The signed link serves the same bytes without any credential.
    expect(await (await SELF.fetch(res.content_url!)).text()).toBe("second version, longer");
  });

  it("serves a public link without credentials until max_downloads, HEAD not counting", async () => {
    const { record, id, mgmt } = await createResource("blobs", credit, {
      public: true,
      max_downloads: 2,
      filename: "notes.txt",
    });
    expect(publicUrl(record)).toMatch(/\/p\/blobs_[0-9A-Za-z]{43}$/);
    const bytes = new TextEncoder().encode("shared with a stranger");
    await upload(id, mgmt, new Blob([bytes]).stream(), bytes.length, "text/plain");
    const path = new URL(publicUrl(record)).pathname;
    expect((await call("HEAD", path)).status).toBe(200);
    for (let i = 0; i < 2; i++) {
      const res = await call("GET", path);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-disposition")).toBe('attachment; filename="notes.txt"');
      expect(await res.text()).toBe("shared with a stranger");
    }
    expect((await call("GET", path)).status).toBe(404);
    expect(await json(await call("GET", `/v1/blobs/${id}`, { headers: managed(mgmt, credit) }))).toMatchObject({
      public_downloads: 2,
      max_downloads: 2,
    });
  });

  it("has no public address unless asked, and leaves nothing in R2 after cancel", async () => {
    const { record, id, mgmt } = await createResource("blobs", credit);
    expect(record.urls.public).toBeNull();
    const bytes = new TextEncoder().encode("gone soon");
    await upload(id, mgmt, new Blob([bytes]).stream(), bytes.length);
    expect(await r2Keys(id)).toHaveLength(1);
    const exported = await json(await call("GET", `/v1/resources/${id}/export`, { headers: managed(mgmt) }));
    expect(exported.data).toMatchObject({
      uploaded: true,
      size: bytes.length,
      content_url: expect.stringContaining("/v1/downloads/"),
    });
    expect((await call("DELETE", `/v1/resources/${id}`, { headers: managed(mgmt) })).status).toBe(200);
    expect(await r2Keys(id)).toEqual([]);
  });
});
