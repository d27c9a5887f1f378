/**
 * A create whose answer never reached its caller (issue 37's soak: a `frontdoor.create` charged, never answered 2xx).
 * The runtime dies after the resource is made and paid for (`create-answer-lost`, test-faults.ts): the worker dies
 * with it, so its Idempotency-Key stays claimed until the lock lapses, and the caller retries under the same key.
 * Every charge that stands must belong to an answered 2xx, once (src/resources/create-identity.ts).
 */
import { SELF, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { deriveKeyMaterial, requestBytes } from "../../src/http/idempotency-store";
import { issueManagementToken } from "../../src/auth/tokens";
import type { ResourceFaults } from "../../src/rpc/resource-faults";
import { lifetimePriceMicro } from "../../src/money/prices";
import { requireKind } from "../../src/resources/registry";
import {
  balanceOf,
  buyCredits,
  call,
  createResource,
  expire,
  json,
  managed,
  publicUrl,
  storageDump,
  stubOf,
  type Receipt,
} from "../harness";

/** A counter for 10 minutes: it can run out within the key's 5-minute lock plus a restart. */
const BODY = { ttl_seconds: 600, label: "lost answer" };
const CREATE_USD = lifetimePriceMicro(requireKind("counters"), BODY.ttl_seconds) / 1e6;

/** The resource the worker derives for this caller's request under `key`, in generation `generation`. */
async function derivedId(token: string, key: string, generation = 0, path = "/v1/counters", body: object = BODY) {
  const m = await deriveKeyMaterial(`credential\nBearer ${token}\n`, key, {
    method: "POST",
    path,
    body: new TextEncoder().encode(JSON.stringify(body)),
  });
  const label = generation ? `management token #${generation}` : "management token";
  return issueManagementToken(await requestBytes(m, label, 64)).parts.resourceId;
}

const create = (token: string, key: string) =>
  call("POST", "/v1/counters", { body: BODY, headers: { authorization: `Bearer ${token}`, "Idempotency-Key": key } });

/** The next create of resource `id` dies at `point`. */
const dieIn = (id: string, point: NonNullable<ResourceFaults["dieAt"]>) => stubOf(id).injectFaults({ dieAt: point });

/** The dead request's key lock lapses, as 5 minutes of wall time would have it (the worker's clock is the real one). */
async function lapseLocks(): Promise<void> {
  await env.DB.prepare("UPDATE idempotency_keys SET expires_at = ? WHERE state = 'in_flight'")
    .bind(Date.now() - 1)
    .run();
}

async function standingCharges(token: string) {
  const receipts = await json<Receipt>(
    await call("GET", "/v1/receipts", { headers: { authorization: `Bearer ${token}` } }),
  );
  return receipts.statement.charges.map((c) => `${c.resource_id} ${c.operation}`);
}

describe("a create whose answer is lost to a dying runtime", () => {
  it("leaves its key claimed: the retry waits (409), then gets the resource made, paid once", async () => {
    const { token } = await buyCredits(1);
    const key = crypto.randomUUID();
    const id = await derivedId(token, key);
    await dieIn(id, "create-answer-lost");
    expect((await create(token, key)).status).toBe(500);
    expect((await balanceOf(token)).spent_usd).toBeCloseTo(CREATE_USD, 6);
    expect((await json(await create(token, key))).code).toBe("idempotency_in_flight");

    await lapseLocks();
    const retried = await create(token, key);
    expect(retried.status).toBe(201);
    const made = await json<{ id: string; management_token: string }>(retried);
    expect(made.id).toBe(id);
    expect((await call("GET", `/v1/resources/${id}`, { headers: managed(made.management_token) })).status).toBe(200);
    expect((await balanceOf(token)).spent_usd).toBeCloseTo(CREATE_USD, 6);
    expect(await standingCharges(token)).toEqual([`${id} counters.create`]);
  });

  it("whose resource expired before the lock lapsed: a retry makes a new one, the unanswered given back", async () => {
    const { token } = await buyCredits(1);
    const key = crypto.randomUUID();
    const first = await derivedId(token, key);
    await dieIn(first, "create-answer-lost");
    expect((await create(token, key)).status).toBe(500);
    await expire(first);

    await lapseLocks();
    const retried = await create(token, key);
    expect(retried.status).toBe(201);
    const made = await json<{ id: string }>(retried);
    expect(made.id).toBe(await derivedId(token, key, 1));
    // One request, one standing charge: the new resource's, which the caller got.
    expect((await balanceOf(token)).spent_usd).toBeCloseTo(CREATE_USD, 6);
    expect(await standingCharges(token)).toEqual([`${made.id} counters.create`]);
    // The answer is kept from then on.
    const replayed = await create(token, key);
    expect(replayed.headers.get("Idempotent-Replayed")).toBe("true");
    expect((await json<{ id: string }>(replayed)).id).toBe(made.id);
  });

  it("a retry whose own answer is lost too: the next retry finds its resource (no third charge)", async () => {
    const { token } = await buyCredits(1);
    const key = crypto.randomUUID();
    const first = await derivedId(token, key);
    const second = await derivedId(token, key, 1);
    await dieIn(first, "create-answer-lost");
    expect((await create(token, key)).status).toBe(500);
    await expire(first);
    await lapseLocks();
    await dieIn(second, "create-answer-lost");
    expect((await create(token, key)).status).toBe(500);

    await lapseLocks();
    const retried = await create(token, key);
    expect(retried.status).toBe(201);
    expect((await json<{ id: string }>(retried)).id).toBe(second);
    expect((await balanceOf(token)).spent_usd).toBeCloseTo(CREATE_USD, 6);
    expect(await standingCharges(token)).toEqual([`${second} counters.create`]);
  });

  it("a retry reaching a creation its dead process left, before the alarm: undone, made again, paid once", async () => {
    const { token } = await buyCredits(1);
    const key = crypto.randomUUID();
    const id = await derivedId(token, key);
    // The object's process dies mid-creation (the worker lives, frees the key and answers 500).
    await dieIn(id, "create-after-index");
    expect((await create(token, key)).status).toBe(500);
    expect((await balanceOf(token)).spent_usd).toBeCloseTo(CREATE_USD, 6);

    const retried = await create(token, key);
    expect(retried.status).toBe(201);
    expect((await json<{ id: string }>(retried)).id).toBe(id);
    expect((await balanceOf(token)).spent_usd).toBeCloseTo(CREATE_USD, 6);
    expect(await standingCharges(token)).toEqual([`${id} counters.create`]);
  });
});

describe("an operation whose answer is lost to a dying runtime", () => {
  it("is not run again by the retry under its key: the object answers what it answered, charged once", async () => {
    const { token } = await buyCredits(1);
    const counter = await createResource("counters", token, { ttl_seconds: 600 });
    const spentBefore = (await balanceOf(token)).spent_usd;
    const key = crypto.randomUUID();
    const increment = () =>
      call("POST", `/v1/counters/${counter.id}/increment`, {
        body: { by: 5 },
        headers: { ...managed(counter.mgmt, token), "Idempotency-Key": key },
      });
    await stubOf(counter.id).injectFaults({ dieAt: "op-answer-lost" });
    expect((await increment()).status).toBe(500);
    expect((await json(await increment())).code).toBe("idempotency_in_flight");

    await lapseLocks();
    const retried = await increment();
    expect(retried.status).toBe(200);
    expect((await json<{ value: number }>(retried)).value).toBe(5);
    expect((await balanceOf(token)).spent_usd - spentBefore).toBeCloseTo(0.0001, 6);
    const read = await call("GET", `/v1/counters/${counter.id}`, { headers: managed(counter.mgmt, token) });
    expect((await json<{ value: number }>(read)).value).toBe(5);
    // Once answered, the worker's own copy replays it too.
    expect((await increment()).headers.get("idempotent-replayed")).toBe("true");
  });
});

describe("a credential the service makes, in an answer lost to a dying runtime", () => {
  type Credential = { type: string; token: string; authorization: string };
  const PROXY = { ttl_seconds: 600, upstream_url: `${env.TEST_RECEIVER_URL}/echo/lost-credential` };
  const PROXY_USD = lifetimePriceMicro(requireKind("proxies"), PROXY.ttl_seconds) / 1e6;

  it("a proxy's: the retry finds the proxy and shows the credential it holds, paid once", async () => {
    const { token } = await buyCredits(1);
    const key = crypto.randomUUID();
    const id = await derivedId(token, key, 0, "/v1/proxies", PROXY);
    await dieIn(id, "create-answer-lost");
    const createProxy = () =>
      call("POST", "/v1/proxies", {
        body: PROXY,
        headers: { authorization: `Bearer ${token}`, "Idempotency-Key": key },
      });
    expect((await createProxy()).status).toBe(500);

    await lapseLocks();
    const retried = await createProxy();
    expect(retried.status).toBe(201);
    const made = await json<{ id: string; credential: Credential; urls: { public: string | null } }>(retried);
    expect(made.id).toBe(id);
    expect(made.credential.token).toMatch(/^zvp_/);
    // The credential shown is the one the proxy checks.
    const through = await SELF.fetch(publicUrl(made), { headers: { authorization: made.credential.authorization } });
    expect(through.status).toBe(200);
    await through.arrayBuffer();
    expect((await SELF.fetch(publicUrl(made))).status).toBe(401);
    expect((await balanceOf(token)).spent_usd).toBeCloseTo(PROXY_USD, 6);
    expect(await standingCharges(token)).toEqual([`${id} proxies.create`]);
    // Another request (another key) makes another proxy with another credential.
    const other = await json<{ id: string; credential: Credential }>(
      await call("POST", "/v1/proxies", {
        body: PROXY,
        headers: { authorization: `Bearer ${token}`, "Idempotency-Key": crypto.randomUUID() },
      }),
    );
    expect(other.id).not.toBe(id);
    expect(other.credential.token).not.toBe(made.credential.token);
  });

  it("a rotated one: the retry gets the new credential from the object, which keeps it sealed", async () => {
    const { token } = await buyCredits(1);
    const p = await createResource("proxies", token, PROXY);
    const key = crypto.randomUUID();
    const rotate = () =>
      call("POST", `/v1/proxies/${p.id}/credential`, {
        headers: { ...managed(p.mgmt, token), "Idempotency-Key": key },
      });
    await stubOf(p.id).injectFaults({ dieAt: "op-answer-lost" });
    expect((await rotate()).status).toBe(500);
    await lapseLocks();
    const retried = await rotate();
    expect(retried.status).toBe(200);
    const rotated = await json<Credential>(retried);
    const url = publicUrl(p.record);
    const through = await SELF.fetch(url, { headers: { authorization: rotated.authorization } });
    expect(through.status).toBe(200);
    await through.arrayBuffer();
    expect((await storageDump(p.id)).includes(rotated.token.slice(4))).toBe(false);
  });
});
