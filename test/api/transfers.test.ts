/**
 * transfers, per issue 15 and docs/kinds.md: a 200 MiB object copied S3 → objects → S3 byte-exact
 * through a real S3-compatible server (s3rver behind a front that checks every SigV4 signature
 * with AWS's own signer, test/peers/s3.ts), part by part, with progress and checksums; URL sources
 * and destinations; a source that fails part-way (failed with what was moved, then resumed from
 * the last part, the digest carried on in memory, or the whole hashed from the destination when a new
 * process lost it); cancel and the resource's end aborting the open upload;
 * refusals before anything is charged.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { transfers } from "../../src/kinds/utilities/transfers";
import { forgetAllDigests } from "../../src/kinds/utilities/transfers/hashing";
import { PART_BYTES } from "../../src/kinds/utilities/transfers/schema";
import {
  advance,
  balanceOf,
  buyCredits,
  call,
  createResource,
  expire,
  json,
  managed,
  opsOn,
  received,
  storageDump,
  usd,
} from "../harness";
import { pattern } from "../peers/pattern";

const S3 = env.TEST_S3;
const MIB = 1024 * 1024;
const s3 = (key: string, extra: Record<string, unknown> = {}) => ({
  type: "s3",
  endpoint: S3.endpoint,
  bucket: S3.bucket,
  key,
  access_key_id: S3.accessKeyId,
  secret_access_key: S3.secretAccessKey,
  ...extra,
});

const hex = (buf: ArrayBuffer) => [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, "0")).join("");
const sha256 = async (bytes: Uint8Array) => hex(await crypto.subtle.digest("SHA-256", bytes));

async function control<T = Record<string, unknown>>(path: string, method = "GET", body?: string): Promise<T> {
  const res = await fetch(`${S3.controlUrl}${path}`, { method, body });
  expect(res.status, path).toBe(200);
  return (await res.json()) as T;
}

async function workspace() {
  const { token } = await buyCredits(5);
  const created = await createResource("transfers", token, {});
  return { ...created, token, ...opsOn(transfers, created.id, created.mgmt, token) };
}

type Ops = Awaited<ReturnType<typeof workspace>>;

/** Polls a transfer until it leaves `running` (the resource's alarm moves it). */
async function settled(w: Ops, id: string, timeoutMs = 240_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const t = await w.ok("get_transfer", `/transfers/${id}`);
    if (t.status !== "running" || Date.now() > deadline) return t;
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe("transfers", () => {
  it("copies 200 MiB S3→objects→S3 byte-exact part by part, with progress, both stores' checksums", async () => {
    const size = 200 * MIB;
    const seeded = await control<{ size: number; sha256: string }>(`/seed?key=big/source.bin&size=${size}`, "POST");
    const w = await workspace();
    const target = await createResource("objects", w.token, {});

    const before = usd((await balanceOf(w.token)).spent_usd);
    const inbound = await w.ok("start", "/transfers", {
      source: s3("big/source.bin"),
      destination: { type: "object", management_token: target.mgmt },
      label: "in",
    });
    expect(usd((await balanceOf(w.token)).spent_usd)).toBe(before + usd(0.01));
    expect(inbound).toMatchObject({
      status: "running",
      bytes_total: size,
      part_bytes: PART_BYTES,
      parts_total: Math.ceil(size / PART_BYTES),
      label: "in",
    });
    expect(inbound.source).toEqual({
      type: "s3",
      endpoint: S3.endpoint,
      region: "us-east-1",
      bucket: S3.bucket,
      key: "big/source.bin",
      access_key_id: S3.accessKeyId,
    });
    expect(inbound.destination).toEqual({ type: "object", resource_id: target.id });
    const done = await settled(w, inbound.transfer_id);
    expect(done, JSON.stringify(done)).toMatchObject({
      status: "completed",
      bytes_moved: size,
      percent: 100,
      parts_done: done.parts_total,
      sha256: seeded.sha256,
      error: null,
    });
    expect(done.rate_bytes_per_second).toBeGreaterThan(0);
    expect(done.destination_etag).toBeTruthy();
    const object = await json(
      await call("GET", `/v1/objects/${target.id}`, { headers: managed(target.mgmt, w.token) }),
    );
    expect(object).toMatchObject({
      stored: true,
      size,
      sha256: seeded.sha256,
      origin: "transfer",
      content_type: "application/octet-stream",
    });

    const outbound = await w.ok("start", "/transfers", {
      source: { type: "object", management_token: target.mgmt },
      destination: s3("big/copy.bin"),
    });
    const back = await settled(w, outbound.transfer_id);
    expect(back, JSON.stringify(back)).toMatchObject({ status: "completed", bytes_moved: size, sha256: seeded.sha256 });
    // Hashed on the way: the copy was never read back to learn its digest.
    expect(await control("/reads?key=big/copy.bin")).toEqual({ reads: 0 });
    const copy = await control<{ size: number; sha256: string; etag: string }>("/digest?key=big/copy.bin");
    expect(copy).toMatchObject({ size, sha256: seeded.sha256 });
    expect(back.destination_etag).toBe(copy.etag);
    expect((await control<{ open: number }>("/uploads")).open).toBe(0);
    const list = await w.ok("list_transfers", "/transfers");
    expect(list.items.map((t) => t.transfer_id)).toEqual([outbound.transfer_id, inbound.transfer_id]);
  }, 600_000);

  it("moves between URLs and S3: a source without ranges in one request, sealed URL headers, a URL's PUT", async () => {
    const w = await workspace();
    const bytes = pattern(0, 70_000);
    await fetch(`${env.TEST_RECEIVER_URL}/_content/transfer-small`, {
      method: "PUT",
      headers: { "content-type": "image/x-test" },
      body: bytes,
    });
    const t = await w.ok("start", "/transfers", {
      source: {
        type: "url",
        url: `${env.TEST_RECEIVER_URL}/content/transfer-small`,
        headers: { authorization: "Bearer transfer-secret-4711" },
      },
      destination: s3("small/from-url.bin"),
    });
    expect(t).toMatchObject({ parts_total: 1, part_bytes: 70_000, content_type: "image/x-test" });
    expect(t.source).toEqual({
      type: "url",
      url: `${env.TEST_RECEIVER_URL}/content/transfer-small`,
      header_names: ["authorization"],
    });
    expect(await storageDump(w.id)).not.toContain("transfer-secret-4711");
    expect(await settled(w, t.transfer_id)).toMatchObject({ status: "completed", sha256: await sha256(bytes) });
    expect(await control("/digest?key=small/from-url.bin")).toMatchObject({
      size: 70_000,
      sha256: await sha256(bytes),
    });

    const put = await w.ok("start", "/transfers", {
      source: s3("small/from-url.bin"),
      destination: { type: "url", url: `${env.TEST_RECEIVER_URL}/echo/transfer-put` },
      content_type: "application/x-copy",
    });
    expect(await settled(w, put.transfer_id)).toMatchObject({ status: "completed", sha256: await sha256(bytes) });
    const [arrived] = await received("transfer-put", 1);
    expect(arrived).toMatchObject({ method: "PUT" });
    expect(arrived!.headers["content-type"]).toBe("application/x-copy");
    expect(Uint8Array.from(atob(arrived!.raw), (c) => c.charCodeAt(0))).toEqual(bytes);

    const empty = await control("/seed?key=small/empty.bin&size=0", "POST");
    const zero = await w.ok("start", "/transfers", {
      source: s3("small/empty.bin"),
      destination: s3("small/empty-copy.bin"),
    });
    expect(await settled(w, zero.transfer_id)).toMatchObject({
      status: "completed",
      bytes_total: 0,
      percent: 100,
      sha256: empty.sha256,
    });
  });

  it(
    "a source failing part-way: retried, then failed with what was moved; resumed from the last part, byte-exact; " +
      "the parts uploaded under the resource's clock",
    async () => {
      const w = await workspace();
      const size = 2 * PART_BYTES + 1234;
      await fetch(`${env.TEST_RECEIVER_URL}/_fail/transfer-flaky`, { method: "PUT", body: String(PART_BYTES) });
      const t = await w.ok("start", "/transfers", {
        source: { type: "url", url: `${env.TEST_RECEIVER_URL}/ranged/${size}/transfer-flaky` },
        destination: s3("flaky/copy.bin"),
      });
      expect(t).toMatchObject({ parts_total: 3 });
      // The first run moves part 1 and fails on part 2; two more runs (5 s, then 20 s later) fail too.
      for (let i = 0; i < 300 && (await w.ok("get_transfer", `/transfers/${t.transfer_id}`)).error === null; i++)
        await new Promise((r) => setTimeout(r, 100));
      await advance(w.id, 5_000);
      await advance(w.id, 20_000);
      const failed = await w.ok("get_transfer", `/transfers/${t.transfer_id}`);
      expect(failed).toMatchObject({ status: "failed", bytes_moved: PART_BYTES, parts_done: 1, sha256: null });
      expect(failed.error).toContain("500");
      expect((await w.refused("resume", "/transfers/trf_0000000000000000000000/resume")).status).toBe(404);

      await fetch(`${env.TEST_RECEIVER_URL}/_fail/transfer-flaky`, { method: "DELETE" });
      const resumed = await w.ok("resume", `/transfers/${t.transfer_id}/resume`);
      expect(resumed).toMatchObject({ status: "running", attempts: 2, bytes_moved: PART_BYTES });
      const done = await settled(w, t.transfer_id);
      expect(done).toMatchObject({ status: "completed", bytes_moved: size, sha256: await sha256(pattern(0, size)) });
      expect(await control("/reads?key=flaky/copy.bin")).toEqual({ reads: 0 });
      expect(await control("/digest?key=flaky/copy.bin")).toMatchObject({ size, sha256: done.sha256 });
      expect((await w.refused("resume", `/transfers/${t.transfer_id}/resume`)).status).toBe(409);
    },
  );

  it(
    "a process replaced between runs loses the digest in memory: the parts go on, " +
      "and the whole is hashed from what the destination holds",
    async () => {
      const w = await workspace();
      const size = 2 * PART_BYTES + 4321;
      const target = await createResource("objects", w.token, {});
      for (const [name, destination] of [
        ["to-s3", s3("replaced/copy.bin")],
        ["to-object", { type: "object", management_token: target.mgmt }],
      ] as const) {
        await fetch(`${env.TEST_RECEIVER_URL}/_fail/${name}`, { method: "PUT", body: String(PART_BYTES) });
        const t = await w.ok("start", "/transfers", {
          source: { type: "url", url: `${env.TEST_RECEIVER_URL}/ranged/${size}/${name}` },
          destination,
        });
        for (let i = 0; i < 300 && (await w.ok("get_transfer", `/transfers/${t.transfer_id}`)).error === null; i++)
          await new Promise((r) => setTimeout(r, 100));
        expect(await w.ok("get_transfer", `/transfers/${t.transfer_id}`)).toMatchObject({
          status: "running",
          parts_done: 1,
        });
        forgetAllDigests();
        await fetch(`${env.TEST_RECEIVER_URL}/_fail/${name}`, { method: "DELETE" });
        await advance(w.id, 5_000);
        expect(await settled(w, t.transfer_id), name).toMatchObject({
          status: "completed",
          bytes_moved: size,
          sha256: await sha256(pattern(0, size)),
        });
      }
      expect(await control("/reads?key=replaced/copy.bin")).toEqual({ reads: 1 });
      const object = await json(
        await call("GET", `/v1/objects/${target.id}`, { headers: managed(target.mgmt, w.token) }),
      );
      expect(object).toMatchObject({ stored: true, size, sha256: await sha256(pattern(0, size)), origin: "transfer" });
    },
  );

  it("a run that completed the upload, then failed, is recognised by the next, which finds it assembled", async () => {
    const w = await workspace();
    const size = 2 * PART_BYTES + 99;
    const key = "recompleted/copy.bin";
    const opened = (await control<{ open: number }>("/uploads")).open;
    await fetch(`${env.TEST_RECEIVER_URL}/_fail/recompleted`, { method: "PUT", body: String(PART_BYTES) });
    const t = await w.ok("start", "/transfers", {
      source: { type: "url", url: `${env.TEST_RECEIVER_URL}/ranged/${size}/recompleted` },
      destination: s3(key),
    });
    for (let i = 0; i < 300 && (await w.ok("get_transfer", `/transfers/${t.transfer_id}`)).error === null; i++)
      await new Promise((r) => setTimeout(r, 100));
    // A new process: the digest is gone, so the run that completes the upload reads it back to hash it, and that
    // read fails (S3's 500). The upload is assembled; the run records nothing but the failure.
    forgetAllDigests();
    await control(`/fail-reads?key=${key}&count=1`, "POST");
    await fetch(`${env.TEST_RECEIVER_URL}/_fail/recompleted`, { method: "DELETE" });
    await advance(w.id, 5_000);
    const readFailed = async () => (await w.ok("get_transfer", `/transfers/${t.transfer_id}`)).error ?? "";
    for (let i = 0; i < 300 && !(await readFailed()).includes("InternalError"); i++)
      await new Promise((r) => setTimeout(r, 100));
    expect(await w.ok("get_transfer", `/transfers/${t.transfer_id}`)).toMatchObject({ status: "running" });
    expect((await control<{ open: number }>("/uploads")).open).toBe(opened); // assembled
    // The next run's completion meets an upload the store already assembled (s3rver: 500): the object is there.
    await advance(w.id, 5_000);
    const done = await settled(w, t.transfer_id);
    expect(done).toMatchObject({ status: "completed", bytes_moved: size, sha256: await sha256(pattern(0, size)) });
    expect(await control(`/digest?key=${key}`)).toMatchObject({ size, sha256: done.sha256 });
  });

  it("cancel and the resource's end abort the open upload at the destination", async () => {
    const w = await workspace();
    const size = 2 * PART_BYTES;
    const fail = async (name: string) => {
      await fetch(`${env.TEST_RECEIVER_URL}/_fail/${name}`, { method: "PUT", body: String(PART_BYTES) });
      const t = await w.ok("start", "/transfers", {
        source: { type: "url", url: `${env.TEST_RECEIVER_URL}/ranged/${size}/${name}` },
        destination: s3(`aborted/${name}.bin`),
      });
      for (let i = 0; i < 300 && (await w.ok("get_transfer", `/transfers/${t.transfer_id}`)).error === null; i++)
        await new Promise((r) => setTimeout(r, 100));
      await advance(w.id, 25_000);
      return t.transfer_id;
    };
    const opened = (await control<{ open: number }>("/uploads")).open;
    const first = await fail("transfer-cancel");
    const second = await fail("transfer-expire");
    expect((await control<{ open: number }>("/uploads")).open).toBe(opened + 2);
    expect(await w.ok("cancel", `/transfers/${first}/cancel`)).toMatchObject({ status: "cancelled", bytes_moved: 0 });
    expect((await control<{ open: number }>("/uploads")).open).toBe(opened + 1);
    expect((await w.refused("cancel", `/transfers/${first}/cancel`)).status).toBe(409);
    expect((await w.refused("delete_transfer", `/transfers/${second}`)).status).toBe(409);
    expect(await w.ok("delete_transfer", `/transfers/${first}`)).toMatchObject({ status: "cancelled" });
    await expire(w.id);
    expect((await control<{ open: number }>("/uploads")).open).toBe(opened);
  });

  it("refuses before charging: wrong credentials or key, no source, wrong-kind destination, bad endpoint", async () => {
    const w = await workspace();
    const blob = await createResource("blobs", w.token, {});
    await control("/seed?key=refusals/one.bin&size=100", "POST");
    const opened = (await control<{ open: number }>("/uploads")).open;
    const before = usd((await balanceOf(w.token)).spent_usd);
    const cases: [Record<string, unknown>, number, string?][] = [
      [
        { source: s3("refusals/one.bin", { secret_access_key: "wrong-secret" }), destination: s3("refusals/x.bin") },
        422,
        "S3 answered 403",
      ],
      [{ source: s3("refusals/missing.bin"), destination: s3("refusals/x.bin") }, 422, "404"],
      [
        { source: s3("refusals/one.bin"), destination: s3("refusals/x.bin", { secret_access_key: "wrong-secret" }) },
        422,
        "SignatureDoesNotMatch",
      ],
      [{ source: s3("refusals/one.bin"), destination: s3("refusals/x.bin", { access_key_id: "NOBODY" }) }, 422, "403"],
      [
        {
          source: { type: "url", url: `${env.TEST_RECEIVER_URL}/down/transfer-refused` },
          destination: s3("refusals/x.bin"),
        },
        422,
        "500",
      ],
      [
        {
          source: { type: "url", url: `${env.TEST_RECEIVER_URL}/chunked/nothing-here` },
          destination: s3("refusals/x.bin"),
        },
        422,
      ],
      [
        { source: s3("refusals/one.bin"), destination: { type: "object", management_token: blob.mgmt } },
        422,
        "objects",
      ],
      [
        { source: { type: "object", management_token: blob.mgmt }, destination: s3("refusals/x.bin") },
        422,
        "no content",
      ],
      [{ source: { type: "object", management_token: "zvm_notarealtoken" }, destination: s3("refusals/x.bin") }, 422],
      [{ source: s3("refusals/one.bin", { bucket: "Bad_Bucket" }), destination: s3("refusals/x.bin") }, 422],
      [{ source: s3("refusals/\u0000.bin"), destination: s3("refusals/x.bin") }, 422],
      [{ source: s3("refusals/one.bin", { endpoint: "ftp://example.com" }), destination: s3("refusals/x.bin") }, 422],
      [{ source: { type: "ftp", url: "ftp://example.com/" }, destination: s3("refusals/x.bin") }, 422],
      [
        {
          source: { type: "url", url: `${env.TEST_RECEIVER_URL}/content/x`, headers: { host: "elsewhere" } },
          destination: s3("refusals/x.bin"),
        },
        422,
      ],
      [{ source: s3("refusals/one.bin") }, 422],
    ];
    for (const [input, status, says] of cases) {
      const problem = await w.refused("start", "/transfers", input);
      expect(problem.status, JSON.stringify(input).slice(0, 120)).toBe(status);
      if (says) expect(problem.detail, JSON.stringify(input).slice(0, 120)).toContain(says);
    }
    expect(usd((await balanceOf(w.token)).spent_usd)).toBe(before);
    expect((await w.ok("list_transfers", "/transfers")).items).toHaveLength(0);
    expect((await control<{ open: number }>("/uploads")).open).toBe(opened);
  });
});
