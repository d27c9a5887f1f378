/**
 * objects: multipart uploads reassembled byte-exact (resume, part rules, abort), source_url
 * copies with and without Content-Length through the egress guard, Range reads, export, and
 * nothing left in R2 (listing or unfinished uploads) after abort, cancel or expiry.
 */
import { SELF, env, runInDurableObject } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import {
  ORIGIN,
  balanceOf,
  buyCredits,
  call,
  createResource,
  json,
  managed,
  expire,
  received,
  serveContent,
  r2Keys,
  type Problem,
  type ResourceExport,
} from "../harness";
import {
  MAX_OBJECT_BYTES,
  MAX_REQUEST_BYTES,
  MIN_PART_BYTES,
  STREAM_PART_BYTES,
} from "../../src/kinds/memory/objects/schema";
import type { objects } from "../../src/kinds/memory/objects";
import type { exportAll } from "../../src/kinds/memory/objects/store";
import type { OpNames, OpOutput } from "../../src/kind/kind";
import { checkPartFits } from "../../src/kinds/memory/objects/layout";

/** What objects' op `N` answers. */
type Out<N extends OpNames<typeof objects>> = OpOutput<typeof objects, N>;

const PART = MIN_PART_BYTES;
let credit: string;
let seq = 0;
const name = () => `objects-${Date.now()}-${seq++}`;

function randomBytes(size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  for (let at = 0; at < size; at += 65536) crypto.getRandomValues(bytes.subarray(at, Math.min(at + 65536, size)));
  return bytes;
}

const hex = (buf: ArrayBuffer) => [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, "0")).join("");
const sha256 = async (bytes: Uint8Array) => hex(await crypto.subtle.digest("SHA-256", bytes));

async function sha256Of(stream: ReadableStream<Uint8Array>): Promise<string> {
  const digest = new crypto.DigestStream("SHA-256");
  await stream.pipeTo(digest);
  return hex(await digest.digest);
}

/** One resource with its management token, and calls against it paid by the shared credit. */
async function setup(config: Record<string, unknown> = {}) {
  const { id, mgmt } = await createResource("objects", credit, config);
  const base = `/v1/objects/${id}`;
  return {
    id,
    mgmt,
    op: (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
      call(method, `${base}${path}`, { body, headers: { ...managed(mgmt, credit), ...headers } }),
    put: (path: string, bytes: Uint8Array, type = "application/octet-stream") =>
      SELF.fetch(`${ORIGIN}${base}${path}`, {
        method: "PUT",
        body: bytes,
        headers: { ...managed(mgmt, credit), "content-type": type },
      }),
  };
}

/** The R2 side of an upload, read from the resource's storage: to check from outside that R2 has let it go. */
async function r2Upload(id: string, uploadId: string): Promise<{ object_key: string; r2_upload_id: string }> {
  const stub = env.RESOURCES.get(env.RESOURCES.idFromName(id));
  return runInDurableObject(stub, (_obj, state) =>
    state.storage.sql
      .exec<{ object_key: string; r2_upload_id: string }>(
        "SELECT object_key, r2_upload_id FROM object_uploads WHERE upload_id = ?",
        uploadId,
      )
      .one(),
  );
}

async function expectUploadGone(up: { object_key: string; r2_upload_id: string }): Promise<void> {
  await expect(
    env.BUCKET.resumeMultipartUpload(up.object_key, up.r2_upload_id).uploadPart(9, new Uint8Array(10)),
  ).rejects.toThrow();
}

beforeAll(async () => {
  credit = (await buyCredits(20)).token;
});

describe("multipart upload", () => {
  it(
    "reassembles 3 × 5 MiB + a short last part byte-exact, sent in parallel and out of order, " +
      "resumed from the part list",
    async () => {
      const o = await setup();
      const data = randomBytes(3 * PART + 12_345);
      const slice = (n: number) => data.subarray((n - 1) * PART, Math.min(n * PART, data.length));
      const up = await json(await o.op("POST", "/uploads", { content_type: "application/x-tar" }));
      expect(up).toMatchObject({
        upload_id: expect.stringMatching(/^up_/),
        state: "open",
        parts: 0,
        bytes: 0,
        part_size: null,
        content_type: "application/x-tar",
      });
      const uploads = `/uploads/${up.upload_id}`;

      // Three parts at once, in no order: each checked against what is in so far, recorded atomically.
      await Promise.all(
        [2, 4, 1].map(async (n) => {
          const res = await o.put(`${uploads}/parts/${n}`, slice(n));
          expect(res.status, await res.clone().text()).toBe(200);
          expect(await json(res)).toMatchObject({
            part_number: n,
            size: slice(n).length,
            sha256: await sha256(slice(n)),
            etag: expect.any(String),
          });
        }),
      );
      // Resuming: which parts are in? (Paged, to show the cursor.)
      const page1 = await json<Out<"list_parts">>(await o.op("GET", `${uploads}/parts?limit=2`));
      expect(page1.items.map((p: { part_number: number }) => p.part_number)).toEqual([1, 2]);
      const page2 = await json(await o.op("GET", `${uploads}/parts?limit=2&cursor=${page1.next_cursor}`));
      expect(page2).toMatchObject({ items: [{ part_number: 4, size: 12_345 }], next_cursor: null });
      expect(await json(await o.op("GET", ""))).toMatchObject({
        stored: false,
        open_upload: { upload_id: up.upload_id, parts: 3, part_size: PART },
      });
      expect((await o.op("POST", "/uploads", {})).status).toBe(409); // one open upload at a time

      expect((await o.put(`${uploads}/parts/3`, slice(3))).status).toBe(200);
      const done = await o.op("POST", `${uploads}/complete`, {});
      expect(done.status, await done.clone().text()).toBe(200);
      const expected = await sha256(data);
      expect(await json(done)).toMatchObject({
        stored: true,
        size: data.length,
        sha256: expected,
        origin: "multipart",
        content_type: "application/x-tar",
        open_upload: null,
      });

      const down = await o.op("GET", "/content");
      expect(down.status).toBe(200);
      expect(down.headers.get("content-length")).toBe(String(data.length));
      expect(down.headers.get("x-content-sha256")).toBe(expected);
      expect(down.headers.get("repr-digest")).toBe(
        `sha-256=:${btoa(String.fromCharCode(...expected.match(/../g)!.map((h) => parseInt(h, 16))))}:`,
      );
      expect(await sha256Of(down.body!)).toBe(expected);

      expect(await json(await o.op("GET", uploads))).toMatchObject({
        state: "completed",
        parts: 0,
        finished_at: expect.any(String),
      });
      expect((await o.put(`${uploads}/parts/5`, slice(4))).status).toBe(409);
      expect(await r2Keys(o.id)).toHaveLength(1);
    },
  );

  it("checks R2's part rules on arrival (422 naming the part) and completes with an explicit part list", async () => {
    const o = await setup({ content_type: "application/zip" });
    const up = await json(await o.op("POST", "/uploads", {}));
    const parts = `/uploads/${up.upload_id}/parts`;
    expect((await o.put(`${parts}/1`, randomBytes(1000))).status).toBe(200); // could still be the last
    const small = await o.put(`${parts}/2`, randomBytes(PART));
    expect(small.status).toBe(422);
    expect(await json(small)).toMatchObject({
      code: "validation_failed",
      errors: [{ path: "part_number" }],
      detail: expect.stringContaining("part 1 has 1000 bytes"),
    });

    const first = randomBytes(PART);
    const one = await json(await o.put(`${parts}/1`, first)); // sending a number again replaces the part
    expect((await o.put(`${parts}/2`, randomBytes(PART + 1))).status).toBe(422); // the last may not be larger
    expect((await o.put(`${parts}/2`, randomBytes(10))).status).toBe(200);
    for (const n of ["0", "10001", "x"]) {
      const bad = await o.put(`${parts}/${n}`, randomBytes(10));
      expect(bad.status, n).toBe(422);
      expect((await json<Problem>(bad)).errors![0]!.path, n).toBe("part_number");
    }

    const wrong = await o.op("POST", `/uploads/${up.upload_id}/complete`, {
      parts: [{ part_number: 1, etag: "nope" }],
    });
    expect(wrong.status).toBe(422);
    expect((await json<Problem>(wrong)).errors![0]!.path).toBe("parts.0.etag");
    const done = await o.op("POST", `/uploads/${up.upload_id}/complete`, {
      parts: [{ part_number: 1, etag: one.etag }],
    });
    expect(done.status, await done.clone().text()).toBe(200);
    expect(await json(done)).toMatchObject({
      size: PART,
      sha256: await sha256(first),
      content_type: "application/zip",
    });
  });

  it("refuses a part past 2 GB in all with 413", () => {
    const full = Array.from({ length: MAX_OBJECT_BYTES / MAX_REQUEST_BYTES }, (_, i) => ({
      part_number: i + 1,
      size: MAX_REQUEST_BYTES,
    }));
    expect(() => checkPartFits(full.slice(0, -1), full[full.length - 1]!)).not.toThrow();
    expect(() => checkPartFits(full, { part_number: full.length + 1, size: 1 })).toThrow(/at most 2000000000/);
  });

  it("abort leaves nothing: R2 refuses the upload afterwards, and a new one can start", async () => {
    const o = await setup();
    const up = await json<Out<"create_upload">>(await o.op("POST", "/uploads", {}));
    expect((await o.put(`/uploads/${up.upload_id}/parts/1`, randomBytes(PART))).status).toBe(200);
    const r2 = await r2Upload(o.id, up.upload_id);
    const aborted = await o.op("DELETE", `/uploads/${up.upload_id}`);
    expect(aborted.status).toBe(200);
    expect(await json(aborted)).toMatchObject({ state: "aborted", parts: 0, bytes: 0 });
    await expectUploadGone(r2);
    expect(await r2Keys(o.id)).toEqual([]);
    expect((await o.put(`/uploads/${up.upload_id}/parts/2`, randomBytes(10))).status).toBe(409);
    expect((await o.op("POST", `/uploads/${up.upload_id}/complete`, {})).status).toBe(409);
    expect((await o.op("DELETE", `/uploads/${up.upload_id}`)).status).toBe(200); // again: no change
    expect((await o.op("POST", "/uploads", {})).status).toBe(200);
    expect((await o.op("GET", "/uploads/up_00000000000000000000000000000000")).status).toBe(404);
  });

  it("cancel and expiry abort an unfinished upload: nothing remains in R2", async () => {
    for (const end of ["cancel", "expire"] as const) {
      const o = await setup();
      expect((await o.put("/content", randomBytes(1000))).status).toBe(200);
      const up = await json<Out<"create_upload">>(await o.op("POST", "/uploads", {}));
      expect((await o.put(`/uploads/${up.upload_id}/parts/1`, randomBytes(PART))).status).toBe(200);
      const r2 = await r2Upload(o.id, up.upload_id);
      const exported = await json(await call("GET", `/v1/resources/${o.id}/export`, { headers: managed(o.mgmt) }));
      expect(exported.data).toMatchObject({
        stored: true,
        size: 1000,
        open_upload: { upload_id: up.upload_id, parts: 1 },
        open_upload_parts: [{ part_number: 1, size: PART }],
      });
      if (end === "cancel") {
        expect((await call("DELETE", `/v1/resources/${o.id}`, { headers: managed(o.mgmt) })).status).toBe(200);
      } else {
        await expire(o.id);
        expect((await call("GET", `/v1/resources/${o.id}`, { headers: managed(o.mgmt) })).status).toBe(410);
      }
      expect(await r2Keys(o.id)).toEqual([]);
      await expectUploadGone(r2);
    }
  });
});

describe("source_url", () => {
  it("copies a source with Content-Length byte-exact, following a redirect", async () => {
    const o = await setup();
    const bytes = randomBytes(3_000_000);
    const url = await serveContent(name(), bytes, { type: "application/pdf" });
    const res = await o.op("POST", "/fetch", { source_url: url.replace("/content/", "/redirect/") });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await json(res)).toMatchObject({
      stored: true,
      size: bytes.length,
      sha256: await sha256(bytes),
      origin: "fetch",
      source_url: url,
      content_type: "application/pdf",
    });
    expect(await sha256Of((await o.op("GET", "/content")).body!)).toBe(await sha256(bytes));
  });

  it("copies a chunked source (no Content-Length) byte-exact in parts, replacing the earlier object", async () => {
    const o = await setup();
    expect((await o.put("/content", randomBytes(100))).status).toBe(200);
    const bytes = randomBytes(2 * STREAM_PART_BYTES + 12_345);
    const url = (await serveContent(name(), bytes)).replace("/content/", "/chunked/");
    const res = await o.op("POST", "/fetch", { source_url: url });
    expect(res.status, await res.clone().text()).toBe(200);
    const view = await json(res);
    expect(view).toMatchObject({ size: bytes.length, sha256: await sha256(bytes), origin: "fetch", source_url: url });
    const down = await o.op("GET", "/content");
    expect(down.headers.get("content-length")).toBe(String(bytes.length));
    expect(await sha256Of(down.body!)).toBe(await sha256(bytes));
    expect(await r2Keys(o.id)).toHaveLength(1);
  });

  it("sends the caller's headers, but drops credentials on a redirect to another origin", async () => {
    const o = await setup();
    const target = name();
    const bytes = randomBytes(1000);
    const url = await serveContent(target, bytes);
    const first = name();
    const source_url =
      `${env.TEST_RECEIVER_URL}/location/${first}?to=` + `${encodeURIComponent(url.replace("127.0.0.1", "localhost"))}`;
    const res = await o.op("POST", "/fetch", {
      source_url,
      headers: { Authorization: "Bearer source-secret", "X-Trace": "t1" },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await json(res)).toMatchObject({ size: 1000, sha256: await sha256(bytes) });
    const [hop] = await received(first, 1);
    expect(hop!.headers).toMatchObject({ authorization: "Bearer source-secret", "x-trace": "t1" });
    const [last] = await received(target, 1);
    expect(last!.headers["x-trace"]).toBe("t1");
    expect(last!.headers.authorization).toBeUndefined();
  });

  it(
    "refuses what the egress guard refuses on any hop (422), over-size sources (413) and failures (502); " +
      "none charged, nothing stored",
    async () => {
      const o = await setup();
      const before = (await balanceOf(credit)).balance_usd;
      const hop = (to: string) => `${env.TEST_RECEIVER_URL}/location/${name()}?to=${encodeURIComponent(to)}`;
      for (const source_url of [
        "ftp://example.com/file",
        "file:///etc/passwd",
        "http://user:pw@127.0.0.1:1/",
        hop("file:///etc/passwd"),
        hop("http://user:pw@127.0.0.1:1/x"),
      ]) {
        const res = await o.op("POST", "/fetch", { source_url });
        expect(res.status, source_url).toBe(422);
        expect((await json<Problem>(res)).errors!.map((e: { path: string }) => e.path)).toContain("source_url");
      }
      const content = await serveContent(name(), randomBytes(50_000));
      for (const source_url of [content, content.replace("/content/", "/chunked/")]) {
        const res = await o.op("POST", "/fetch", { source_url, max_bytes: 10_000 });
        expect(res.status, source_url).toBe(413);
        expect((await json(res)).code).toBe("payload_too_large");
      }
      const missing = await serveContent(name(), "gone", { status: 404 });
      for (const source_url of [missing, "http://127.0.0.1:1/nothing-listens-here"]) {
        const res = await o.op("POST", "/fetch", { source_url });
        expect(res.status, source_url).toBe(502);
        expect((await json(res)).code).toBe("upstream_failed");
      }
      expect(await r2Keys(o.id)).toEqual([]);
      expect((await balanceOf(credit)).balance_usd).toBe(before);
    },
  );
});

describe("reads", () => {
  it("serves ranges (several, suffix, open-ended, clipped), refuses past the end: 416, uncharged; HEAD", async () => {
    const o = await setup();
    const bytes = randomBytes(1000);
    expect((await o.put("/content", bytes, "application/octet-stream")).status).toBe(200);
    const cases: [string, number, number][] = [
      ["bytes=0-99", 0, 100],
      ["bytes=500-599", 500, 600],
      ["bytes=-100", 900, 1000],
      ["bytes=900-", 900, 1000],
      ["bytes=990-5000", 990, 1000],
    ];
    for (const [range, from, to] of cases) {
      const res = await o.op("GET", "/content", undefined, { range });
      expect(res.status, range).toBe(206);
      expect(res.headers.get("content-range"), range).toBe(`bytes ${from}-${to - 1}/1000`);
      expect(new Uint8Array(await res.arrayBuffer()), range).toEqual(bytes.subarray(from, to));
    }
    const several = await o.op("GET", "/content", undefined, { range: "bytes=0-1,5-6" });
    expect(several.status).toBe(200);
    expect(new Uint8Array(await several.arrayBuffer())).toEqual(bytes);

    const before = (await balanceOf(credit)).balance_usd;
    const past = await o.op("GET", "/content", undefined, { range: "bytes=1000-" });
    expect(past.status).toBe(416);
    expect(past.headers.get("content-range")).toBe("bytes */1000");
    expect((await json(past)).code).toBe("range_not_satisfiable");
    expect((await balanceOf(credit)).balance_usd).toBe(before);

    const head = await o.op("HEAD", "/content");
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe("1000");
    expect(head.headers.get("x-content-sha256")).toBe(await sha256(bytes));
  });

  it("exports a signed link to the bytes, and deletes them on request", async () => {
    const o = await setup({ filename: "notes.bin" });
    const bytes = randomBytes(4096);
    expect((await o.put("/content", bytes)).status).toBe(200);
    const exported = await json<ResourceExport<ReturnType<typeof exportAll>>>(
      await call("GET", `/v1/resources/${o.id}/export`, { headers: managed(o.mgmt) }),
    );
    expect(exported.data).toMatchObject({
      stored: true,
      size: 4096,
      sha256: await sha256(bytes),
      origin: "upload",
      content_url: expect.stringContaining("/v1/downloads/"),
    });
    const link = await SELF.fetch(exported.data.content_url!);
    expect(link.headers.get("content-disposition")).toBe('attachment; filename="notes.bin"');
    expect(new Uint8Array(await link.arrayBuffer())).toEqual(bytes);

    expect(await json(await o.op("DELETE", "/content"))).toMatchObject({ stored: false, size: null });
    expect(await r2Keys(o.id)).toEqual([]);
    expect((await o.op("GET", "/content")).status).toBe(404);
  });
});
