/**
 * A delivery outlives its resource, and so does the body it sends (src/delivery/ended-bodies.ts): an end deletes the
 * resource's R2 prefix but the stored bodies of deliveries still under way, lists those in D1, and the daily sweep
 * deletes them once every attempt they could serve is past. A settled delivery's body goes with the resource.
 */
import { SELF, createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { ENDED_BODY_KEEP_MS } from "../../src/delivery/ended-bodies";
import { INLINE_PUBLIC_BODY_BYTES } from "../../src/kind/public-face";
import {
  buyCredits,
  call,
  createResource,
  json,
  managed,
  publicUrl,
  r2Keys,
  received,
  stubOf,
  type DeliveryPage,
} from "../harness";

const receiver = env.TEST_RECEIVER_URL;
const unique = () => crypto.randomUUID().slice(0, 8);
/** A message the worker stores in R2 before the fanout sees it (above the inline size of a public body). */
const message = JSON.stringify({ type: "big", pad: "x".repeat(INLINE_PUBLIC_BODY_BYTES) });

async function fanoutTo(url: string) {
  const { token } = await buyCredits(1);
  const created = await createResource("fanout", token, { destinations: [{ url }] });
  const publish = async () => {
    const res = await SELF.fetch(publicUrl(created.record), {
      method: "POST",
      body: message,
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ sent: 1 });
  };
  const cancel = async () =>
    expect(
      (await call("DELETE", `/v1/resources/${created.id}`, { headers: managed(created.mgmt, token) })).status,
    ).toBe(200);
  return { ...created, token, publish, cancel };
}

const keptRow = async (key: string) =>
  env.DB.prepare("SELECT delete_after FROM ended_bodies WHERE key = ?").bind(key).first<{ delete_after: number }>();

async function dailySweep() {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "17 3 * * *" }), env, ctx);
  await waitOnExecutionContext(ctx);
}

describe("a stored body whose resource ends while its delivery is under way", () => {
  it("is still sent after the end, and deleted by the daily sweep once its time is up", async () => {
    const name = unique();
    const f = await fanoutTo(`${receiver}/ok/${name}`);
    // The commit's send stays off the queue (a process that died after it): the end itself puts it there.
    await stubOf(f.id).injectFaults({ skipDispatches: 1 });
    await f.publish();
    const before = Date.now();
    await f.cancel();

    const [hit] = await received(name, 1);
    expect(hit!.body).toBe(message);
    // Of the prefix, only the body is left, listed for the sweep.
    const [key, ...rest] = await r2Keys(f.id);
    expect(rest).toEqual([]);
    expect(key).toMatch(new RegExp(`^${f.id}/public-bodies/`));
    const row = await keptRow(key!);
    expect(row!.delete_after).toBeGreaterThanOrEqual(before + ENDED_BODY_KEEP_MS);

    await dailySweep();
    expect(await r2Keys(f.id)).toEqual([key]); // not yet: a retry may still need it
    await env.DB.prepare("UPDATE ended_bodies SET delete_after = ? WHERE key = ?")
      .bind(Date.now() - 1, key)
      .run();
    await dailySweep();
    expect(await r2Keys(f.id)).toEqual([]);
    expect(await keptRow(key!)).toBeNull();
  });

  it("goes with the resource when its delivery is settled (dead: no retry is left once it ends)", async () => {
    const f = await fanoutTo(`${receiver}/down/${unique()}`);
    await f.publish();
    const dead = async () =>
      (
        await json<DeliveryPage>(
          await call("GET", `/v1/fanout/${f.id}/deliveries`, { headers: managed(f.mgmt, f.token) }),
        )
      ).items.every((d) => d.status === "dead");
    for (let i = 0; i < 300 && !(await dead()); i++) await new Promise((r) => setTimeout(r, 100));
    const [key] = await r2Keys(f.id);
    expect(key).toMatch(/\/public-bodies\//); // a dead delivery's body is kept while the resource lives, for a retry
    await f.cancel();
    expect(await r2Keys(f.id)).toEqual([]);
    expect(await keptRow(key!)).toBeNull();
  });
});
