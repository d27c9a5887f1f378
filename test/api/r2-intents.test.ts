/**
 * R2 bytes put before their commit (durable-objects/resource/r2-intents.ts): the process dies between a prepare step's
 * put and its transaction (`after-prepare`, test-faults.ts). The put's intent, written before it, falls due and the
 * alarm deletes the key; nothing was charged. Bytes a commit kept are never touched by the alarm.
 */
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { INTENT_GRACE_MS } from "../../durable-objects/resource/r2-intents";
import { INLINE_PUBLIC_BODY_BYTES } from "../../src/kind/public-face";
import {
  ORIGIN,
  advance,
  balanceOf,
  buyCredits,
  call,
  createResource,
  json,
  managed,
  publicUrl,
  r2Keys,
  stubOf,
} from "../harness";

const upload = (id: string, mgmt: string, credit: string, text: string) =>
  SELF.fetch(`${ORIGIN}/v1/blobs/${id}/content`, {
    method: "PUT",
    body: text,
    headers: { ...managed(mgmt, credit), "content-type": "text/plain", "content-length": String(text.length) },
  });

describe("R2 bytes put before a commit the process never made", () => {
  it("are deleted by the alarm once their intent outlives its call; nothing is charged", async () => {
    const { token } = await buyCredits(1);
    const { id, mgmt } = await createResource("blobs", token);
    const before = (await balanceOf(token)).balance_usd;
    await stubOf(id).injectFaults({ dieAt: "after-prepare" });
    expect((await upload(id, mgmt, token, "bytes nobody will own")).status).toBe(500);
    // The bytes reached R2; the commit that would have recorded them never ran.
    expect(await r2Keys(id)).toHaveLength(1);
    expect((await call("GET", `/v1/blobs/${id}/content`, { headers: managed(mgmt, token) })).status).toBe(404);

    await advance(id, INTENT_GRACE_MS - 60_000);
    expect(await r2Keys(id)).toHaveLength(1); // within the grace, the call may still be on its way
    await advance(id, 60_000);
    expect(await r2Keys(id)).toEqual([]);
    expect((await balanceOf(token)).balance_usd).toBe(before);
  });

  it("bytes a commit kept stay past the grace, and are served", async () => {
    const { token } = await buyCredits(1);
    const { id, mgmt } = await createResource("blobs", token);
    expect((await upload(id, mgmt, token, "kept")).status).toBe(200);
    const kept = await r2Keys(id);
    expect(kept).toHaveLength(1);
    await advance(id, INTENT_GRACE_MS + 60_000);
    expect(await r2Keys(id)).toEqual(kept);
    const down = await call("GET", `/v1/blobs/${id}/content`, { headers: managed(mgmt, token) });
    expect(await down.text()).toBe("kept");
  });
});

describe("a large public body the worker stored before its request reached the object", () => {
  const big = new Uint8Array(INLINE_PUBLIC_BODY_BYTES + 1).fill(0x61);
  const publicBodies = async (id: string) => (await r2Keys(id)).filter((k) => k.includes("/public-bodies/"));

  async function bin() {
    const { token } = await buyCredits(1);
    const { id, mgmt, record } = await createResource("bins", token);
    return { id, mgmt, token, url: publicUrl(record) };
  }

  it("is deleted by the alarm when the runtime died after the put; nothing was captured", async () => {
    const { id, mgmt, token, url } = await bin();
    await stubOf(id).injectFaults({ dieAt: "public-request-lost" });
    expect((await SELF.fetch(`${url}/hook`, { method: "POST", body: big })).status).toBe(500);
    // The worker died before it could clean up: the bytes are in R2, owned by no capture.
    expect(await publicBodies(id)).toHaveLength(1);
    const list = await call("GET", `/v1/bins/${id}/captures`, { headers: managed(mgmt, token) });
    expect((await json<{ items: unknown[] }>(list)).items).toEqual([]);

    await advance(id, INTENT_GRACE_MS - 60_000);
    expect(await publicBodies(id)).toHaveLength(1);
    await advance(id, 60_000);
    expect(await publicBodies(id)).toEqual([]);
  });

  it("is the capture's once its request committed: kept past the grace and served whole", async () => {
    const { id, mgmt, token, url } = await bin();
    expect((await SELF.fetch(`${url}/hook`, { method: "POST", body: big })).status).toBe(200);
    const kept = await publicBodies(id);
    expect(kept).toHaveLength(1);
    await advance(id, INTENT_GRACE_MS + 60_000);
    expect(await publicBodies(id)).toEqual(kept);
    const capture = await json<{ size: number; raw_url: string }>(
      await call("GET", `/v1/bins/${id}/captures/1`, { headers: managed(mgmt, token) }),
    );
    expect(capture.size).toBe(big.length);
    const raw = await SELF.fetch(capture.raw_url);
    expect(new Uint8Array(await raw.arrayBuffer())).toEqual(big);
  });

  it("is never stored for an address whose resource has ended: 410, nothing in R2", async () => {
    const { id, mgmt, token, url } = await bin();
    expect((await call("DELETE", `/v1/resources/${id}`, { headers: managed(mgmt, token) })).status).toBe(200);
    const res = await SELF.fetch(`${url}/hook`, { method: "POST", body: big });
    expect(res.status).toBe(410);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(await r2Keys(id)).toEqual([]);
  });
});
