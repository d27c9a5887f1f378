/**
 * The deliveries outbox (durable-objects/resource/deliveries.ts): a send is recorded with
 * the work that makes it and reaches its receiver even when the process dies after the
 * commit, the queue refuses, or a queued message is lost (test-only faults, injected into
 * the resource's object); a large binary body goes by reference, once for every destination,
 * signed over its exact bytes, and is deleted once settled; the log is bounded.
 */
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { DELIVERY_RETENTION, DISPATCH_GRACE_MS, MAX_REFUSALS } from "../../src/delivery/outbox-policy";
import type { ResourceFaults } from "../../src/rpc/resource-faults";
import { fromBase64, sha256Hex, toBase64 } from "../../src/bytes";
import {
  advance,
  buyCredits,
  call,
  createResource,
  json,
  managed,
  r2Keys,
  received,
  stubOf,
  type DeliveryPage,
  type PriceList,
  type Received,
  verifierOf,
} from "../harness";

const receiver = env.TEST_RECEIVER_URL;
const unique = () => crypto.randomUUID().slice(0, 8);

/** A wakeup an hour out, calling the receiver at /ok/<name>, with `faults` injected before it fires. */
async function wakeupWith(faults: ResourceFaults) {
  const name = unique();
  const { token } = await buyCredits(1);
  const created = await createResource("wakeups", token, {
    url: `${receiver}/ok/${name}`,
    body: { n: 1 },
    delay_seconds: 3600,
  });
  await stubOf(created.id).injectFaults(faults);
  const log = async () =>
    (
      await json<DeliveryPage>(
        await call("GET", `/v1/wakeups/${created.id}/deliveries`, { headers: managed(created.mgmt) }),
      )
    ).items[0];
  const status = async () =>
    (await json(await call("GET", `/v1/wakeups/${created.id}`, { headers: managed(created.mgmt, token) }))).status;
  return { ...created, name, log, status };
}

async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean, tries = 100): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await read();
    if (ok(v)) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the state was never reached");
}

/** Nothing more arrives for `name` for a moment (the queue in tests delivers within milliseconds). */
async function settledCount(name: string): Promise<number> {
  await new Promise((r) => setTimeout(r, 500));
  return ((await (await fetch(`${receiver}/_log/${name}`)).json()) as Received[]).length;
}

/** A counter with a notify_url, cancelled while the queue refuses its next `refusals` sends. */
async function cancelledWith(refusals: number) {
  const name = unique();
  const { token } = await buyCredits(1);
  const counter = await createResource("counters", token, { notify_url: `${receiver}/ok/${name}` });
  const stub = stubOf(counter.id);
  await stub.injectFaults({ refuseSends: refusals });
  expect((await call("DELETE", `/v1/resources/${counter.id}`, { headers: managed(counter.mgmt) })).status).toBe(200);
  return { name, counter, stub };
}

/** The object's meta table, while it has one (an end deletes every table last). */
const metaTable = (stub: ReturnType<typeof stubOf>) =>
  runInDurableObject(stub, (_o, state) =>
    state.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'meta'").toArray(),
  );

describe("outbox", () => {
  it("a send the process never made after its commit is made by the alarm, once", async () => {
    const w = await wakeupWith({ skipDispatches: 1 });
    await advance(w.id, 3600_000);
    // The wakeup fired and its delivery is recorded, but nothing reached the queue.
    expect(await w.log()).toMatchObject({ status: "pending", sends: 0, attempts: 0 });
    expect(await settledCount(w.name)).toBe(0);
    const alarm = await runInDurableObject(stubOf(w.id), (_o, state) => state.storage.getAlarm());
    expect(alarm).toBeLessThanOrEqual(Date.now() + DISPATCH_GRACE_MS);

    await advance(w.id, DISPATCH_GRACE_MS);
    const [hit] = await received(w.name, 1);
    expect(verifierOf(w.record).verify(hit!.body, hit!.headers)).toEqual({ n: 1 });
    expect(await eventually(w.log, (d) => d!.status === "delivered")).toMatchObject({ sends: 1, attempts: 1 });
    expect(await w.status()).toBe("delivered");
    expect(await settledCount(w.name)).toBe(1);
  });

  it("a queue that refuses the first sends is tried again with backoff until one goes through", async () => {
    const w = await wakeupWith({ refuseSends: 3 });
    await advance(w.id, 3600_000); // the dispatch after the commit, then the alarm's (backoff is scaled to 0 here)
    await received(w.name, 1);
    expect(await eventually(w.log, (d) => d!.status === "delivered")).toMatchObject({ sends: 1, attempts: 1 });
    expect(await settledCount(w.name)).toBe(1);
  });

  it("a delivery the queue keeps refusing is dead, logged, and the kind hears so", async () => {
    const w = await wakeupWith({ refuseSends: MAX_REFUSALS });
    await advance(w.id, 3600_000);
    const log = await eventually(w.log, (d) => d!.status === "dead");
    expect(log!.attempt_log.at(-1)!.error).toMatch(/^not queued: the queue refused it 8 times/);
    expect(await eventually(w.status, (s) => s === "failed")).toBe("failed");
    expect(await settledCount(w.name)).toBe(0);
  });

  it("a cancel whose event the queue refuses keeps its storage until the alarm has queued the event", async () => {
    // Refused as the event is emitted, and again when the end puts what is left on the queue before it deletes.
    const { name, counter, stub } = await cancelledWith(2);
    // Not on the queue: the outbox that holds it stays, and the resource answers as ended meanwhile.
    expect(await settledCount(name)).toBe(0);
    expect((await call("GET", `/v1/resources/${counter.id}`, { headers: managed(counter.mgmt) })).status).toBe(410);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const [hit] = await received(name, 1);
    expect(hit!.headers["webhook-id"]).toMatch(/^evt_/);
    expect(JSON.parse(hit!.body)).toMatchObject({ type: "resource.cancelled", resource_id: counter.id });
    expect(await settledCount(name)).toBe(1);
    // Then the end finished: no table left.
    expect(await metaTable(stub)).toEqual([]);
  });

  it("a cancel whose event the queue never takes still ends, once the event is dead", async () => {
    const { name, stub } = await cancelledWith(MAX_REFUSALS);
    // Each resumed end tries twice (emitting, then before deleting): the refusals run out within a few alarms.
    let alarms = 0;
    while (await runDurableObjectAlarm(stub)) alarms++;
    expect(alarms).toBeLessThanOrEqual(MAX_REFUSALS / 2);
    expect(await settledCount(name)).toBe(0);
    expect(await metaTable(stub)).toEqual([]);
  });

  it("a message lost after the queue took it is sent again under the same webhook-id", async () => {
    // Longer than the queue takes here (it batches for up to a second), far shorter than in production.
    const w = await wakeupWith({ loseSends: 1, reportWindowMs: 3000 });
    await advance(w.id, 3600_000);
    const [hit] = await received(w.name, 1); // the alarm, 3 s of real time later
    const log = await eventually(w.log, (d) => d!.status === "delivered");
    expect(log).toMatchObject({ sends: 2, attempts: 1 });
    expect(hit!.headers["webhook-id"]).toBe(log!.id);
    expect(await settledCount(w.name)).toBe(1);
  });
});

/** Random bytes, in 64 KiB draws (getRandomValues' limit). */
function randomBytes(size: number): Uint8Array {
  const out = new Uint8Array(size);
  for (let at = 0; at < size; at += 65536) crypto.getRandomValues(out.subarray(at, Math.min(size, at + 65536)));
  return out;
}

/** Sends `body` (stored at `key`) from resource `id` to each url, from inside its object as a kind's work would. */
async function sendStored(id: string, key: string, body: Uint8Array, urls: string[]): Promise<string[]> {
  await env.BUCKET.put(key, body);
  return runInDurableObject(stubOf(id), async (obj) => {
    // The object's work part (private: reached here as a kind's operation reaches it).
    type Store = import("../../src/kind/kind").EngineStore;
    const o = obj as unknown as {
      meta: { get(): unknown };
      work: { commit<T>(meta: unknown, work: (store: Store) => T): Promise<T> };
    };
    return o.work.commit(o.meta.get(), (store) =>
      urls.map((url) =>
        store.send({
          url,
          method: "POST",
          headers: { "content-type": "application/octet-stream" },
          body: { key },
          eventType: "test.stored",
        }),
      ),
    );
  });
}

describe("stored bodies", () => {
  it(
    "a 10 MiB body fanned out to 3 receivers is stored once, arrives byte-exact and signed, " +
      "and is deleted once delivered",
    async () => {
      const { token } = await buyCredits(1);
      const w = await createResource("wakeups", token, { url: `${receiver}/ok/${unique()}`, delay_seconds: 86400 });
      // Standard Webhooks libraries read the payload as UTF-8 text, so these random bytes are kept to
      // 7 bits (NUL and control characters included) for the library's check; the next test takes every byte value.
      const body = randomBytes(10 * 1024 * 1024).map((b) => b & 0x7f);
      const key = `${w.id}/outbox/fanout`;
      const names = [unique(), unique(), unique()];
      const ids = await sendStored(
        w.id,
        key,
        body,
        names.map((n) => `${receiver}/ok/${n}`),
      );
      const digest = sha256Hex(body);
      for (const [i, name] of names.entries()) {
        const [hit] = await received(name, 1);
        const bytes = fromBase64(hit!.raw);
        expect(bytes.length).toBe(body.length);
        expect(sha256Hex(bytes)).toBe(digest);
        expect(hit!.headers["content-length"]).toBe(String(body.length));
        expect(hit!.headers["webhook-id"]).toBe(ids[i]);
        // The library's own signing (verify would go on to parse the body as JSON).
        const signed = verifierOf(w.record).sign(
          ids[i]!,
          new Date(Number(hit!.headers["webhook-timestamp"]) * 1000),
          Buffer.from(bytes),
        );
        expect(hit!.headers["webhook-signature"]).toBe(signed);
      }
      const log = await eventually(
        async () =>
          (await json<DeliveryPage>(await call("GET", `/v1/wakeups/${w.id}/deliveries`, { headers: managed(w.mgmt) })))
            .items,
        (items: DeliveryPage["items"]) => items.length === 3 && items.every((d) => d.status === "delivered"),
      );
      expect(log[0]).toMatchObject({ body: null, body_stored: true });
      // Settled everywhere: the one object is gone.
      // At once, not when the alarm comes round (its grace is 10 s).
      expect(
        await eventually(
          () => r2Keys(w.id),
          (keys) => !keys.includes(key),
          20,
        ),
      ).not.toContain(key);
    },
    180_000,
  ); // 10 MiB through R2 and three receivers: minutes on a busy machine, not a timing assertion

  it("signs a body of every byte value over its exact bytes; keeps a dead delivery's body for a retry", async () => {
    const { token } = await buyCredits(1);
    const w = await createResource("wakeups", token, { url: `${receiver}/ok/${unique()}`, delay_seconds: 86400 });
    const body = randomBytes(256 * 1024);
    body.set(Array.from({ length: 256 }, (_, i) => i));
    const key = `${w.id}/outbox/binary`;
    const name = unique();
    const [id] = await sendStored(w.id, key, body, [`${receiver}/fail/8/${name}`]);
    const hits = await received(name, 8);
    for (const hit of hits) expect(fromBase64(hit.raw)).toEqual(body);
    // The signature per the spec: HMAC-SHA256 over "id.timestamp." and then the bytes themselves.
    const h = hits[0]!.headers;
    const secret = fromBase64(w.record.signing_secret!.slice("whsec_".length));
    const hmacKey = await crypto.subtle.importKey("raw", secret, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    const signed = new Uint8Array([
      ...new TextEncoder().encode(`${h["webhook-id"]}.${h["webhook-timestamp"]}.`),
      ...body,
    ]);
    expect(h["webhook-signature"]).toBe(
      `v1,${toBase64(new Uint8Array(await crypto.subtle.sign("HMAC", hmacKey, signed)))}`,
    );

    const logOf = async () =>
      (
        await json<DeliveryPage>(await call("GET", `/v1/wakeups/${w.id}/deliveries`, { headers: managed(w.mgmt) }))
      ).items.find((d: { id: string }) => d.id === id);
    await eventually(logOf, (d) => d!.status === "dead");
    expect(await r2Keys(w.id)).toContain(key); // dead: kept, so a retry can send it
    const retried = await call("POST", `/v1/wakeups/${w.id}/deliveries/${id}/retry`, { headers: managed(w.mgmt) });
    expect(retried.status).toBe(200);
    await received(name, 9); // the receiver answers 200 from the 9th request on
    expect(await eventually(logOf, (d) => d!.status === "delivered")).toMatchObject({ sends: 2, attempts: 9 });
    // At once, not when the alarm comes round (its grace is 10 s).
    expect(
      await eventually(
        () => r2Keys(w.id),
        (keys) => !keys.includes(key),
        20,
      ),
    ).not.toContain(key);
  });

  it("a stored body outside the resource's prefix is refused", async () => {
    const { token } = await buyCredits(1);
    const w = await createResource("wakeups", token, { url: `${receiver}/ok/${unique()}`, delay_seconds: 86400 });
    await expect(sendStored(w.id, "someone-else/body", new Uint8Array(1), [`${receiver}/ok/x`])).rejects.toThrow(
      /is not below/,
    );
  });
});

describe("retention", () => {
  it("settled deliveries leave the log after the published days; the price list publishes the bounds", async () => {
    const prices = await json<PriceList>(await call("GET", "/v1/prices"));
    expect(prices.limits.deliveries).toEqual(DELIVERY_RETENTION);

    const { token } = await buyCredits(1);
    const w = await createResource("wakeups", token, {
      url: `${receiver}/ok/${unique()}`,
      delay_seconds: 3600,
      ttl_seconds: 90 * 86400,
    });
    await advance(w.id, 3600_000);
    const list = async () =>
      (await json<DeliveryPage>(await call("GET", `/v1/wakeups/${w.id}/deliveries`, { headers: managed(w.mgmt) })))
        .items;
    await eventually(list, (items: DeliveryPage["items"]) => items[0]?.status === "delivered");
    await advance(w.id, (DELIVERY_RETENTION.settled_days - 1) * 86_400_000);
    await runDurableObjectAlarm(stubOf(w.id));
    expect(await list()).toHaveLength(1);
    await advance(w.id, 2 * 86_400_000);
    await runDurableObjectAlarm(stubOf(w.id));
    expect(await list()).toHaveLength(0);
  });
});

describe("R2 deletes", () => {
  it("a delete R2 refuses after the commit is made by the alarm", async () => {
    const { token } = await buyCredits(1);
    const b = await createResource("blobs", token, { content_type: "text/plain" });
    const put = (text: string) =>
      call("PUT", `/v1/blobs/${b.id}/content`, {
        headers: { ...managed(b.mgmt, token), "content-type": "text/plain", "content-length": String(text.length) },
        body: text,
      });
    expect((await put("first")).status).toBe(200);
    const [first] = await r2Keys(b.id);
    await stubOf(b.id).injectFaults({ failDrops: 1 });
    expect((await put("second")).status).toBe(200); // replaced: the old bytes are let go, and R2 refuses
    expect(await r2Keys(b.id)).toContain(first);
    await advance(b.id, 60_000);
    expect(await r2Keys(b.id)).not.toContain(first);
    expect(await r2Keys(b.id)).toHaveLength(1);
  });
});
