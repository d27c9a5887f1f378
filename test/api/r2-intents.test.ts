/**
 * R2 bytes put before their commit (durable-objects/resource/r2-intents.ts): the process dies between a prepare step's
 * put and its transaction (`after-prepare`, test-faults.ts). The put's intent, written before it, falls due and the
 * alarm deletes the key; nothing was charged. Bytes a commit kept are never touched by the alarm.
 */
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { INTENT_GRACE_MS } from "../../durable-objects/resource/r2-intents";
import { ORIGIN, advance, balanceOf, buyCredits, call, createResource, managed, r2Keys, stubOf } from "../harness";

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
