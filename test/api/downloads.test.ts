/** Signed download links (src/kind/downloads.ts): bytes, ranges, refusals, and nothing after the resource ends. */
import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { ORIGIN, buyCredits, call, createResource, managed } from "../harness";
import { signedDownloadUrl } from "../../src/kind/downloads";

const BYTES = Uint8Array.from({ length: 1000 }, (_, i) => i % 251);
let credit: string;

/** A counters resource with an object under its prefix, as a kind would store one, and a link to it. */
async function stored() {
  const { id, mgmt } = await createResource("counters", credit);
  const key = `${id}/files/a b.bin`;
  await env.BUCKET.put(key, BYTES, { httpMetadata: { contentType: "application/x-test" } });
  const link = signedDownloadUrl(env, ORIGIN, key, Date.now() + 3600_000);
  return { id, mgmt, key, path: link.slice(ORIGIN.length) };
}

describe("signed download links", () => {
  beforeAll(async () => {
    credit = (await buyCredits(1)).token;
  });

  it("serve the exact bytes with their content type, without credentials", async () => {
    const { path } = await stored();
    const res = await call("GET", path);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/x-test");
    expect(res.headers.get("content-length")).toBe("1000");
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(BYTES);
    const head = await call("HEAD", path);
    expect(head.status).toBe(200);
    expect(head.headers.get("etag")).toBe(res.headers.get("etag"));
  });

  it("honour byte ranges, and refuse one past the end", async () => {
    const { path } = await stored();
    const middle = await call("GET", path, { headers: { range: "bytes=10-19" } });
    expect(middle.status).toBe(206);
    expect(middle.headers.get("content-range")).toBe("bytes 10-19/1000");
    expect(new Uint8Array(await middle.arrayBuffer())).toEqual(BYTES.slice(10, 20));
    const tail = await call("GET", path, { headers: { range: "bytes=-5" } });
    expect(tail.status).toBe(206);
    expect(new Uint8Array(await tail.arrayBuffer())).toEqual(BYTES.slice(995));
    const open = await call("GET", path, { headers: { range: "bytes=990-" } });
    expect(new Uint8Array(await open.arrayBuffer())).toEqual(BYTES.slice(990));
    const past = await call("GET", path, { headers: { range: "bytes=5000-" } });
    expect(past.status).toBe(416);
  });

  it("refuse an edited key, signature or expiry, and an expired link", async () => {
    const { key, path } = await stored();
    expect((await call("GET", path.replace("a%20b", "a%20c"))).status).toBe(403);
    expect(
      (
        await call(
          "GET",
          path.replace(/sig=(.)/, (_, c: string) => `sig=${c === "0" ? "1" : "0"}`),
        )
      ).status,
    ).toBe(403);
    expect((await call("GET", path.replace(/expires=\d+/, "expires=99999999999"))).status).toBe(403);
    expect((await call("GET", path.replace("a%20b", "a%zz"))).status).toBe(403);
    const expired = signedDownloadUrl(env, ORIGIN, key, Date.now() - 1000).slice(ORIGIN.length);
    const res = await call("GET", expired);
    expect(res.status).toBe(403);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
  });

  it("answer 404 once the resource has ended and its objects are gone", async () => {
    const { id, mgmt, path } = await stored();
    expect((await call("DELETE", `/v1/resources/${id}`, { headers: managed(mgmt) })).status).toBe(200);
    expect((await call("GET", path)).status).toBe(404);
  });
});
