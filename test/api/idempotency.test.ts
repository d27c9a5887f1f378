/**
 * Idempotency-Key on POST (docs/api.md#requests-and-conventions): replay, mismatch, in flight, scoping, and one charge
 * under concurrency.
 */
import { env } from "cloudflare:test";
import { generatePrivateKey } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { balanceOf, buyCredits, call, json, signPayment, type PaymentRequired } from "../harness";

/** A counter at its default TTL: 30 days at $0.001. */
const CREATE_USD = 0.03;

const keyed = (key: string, headers: Record<string, string> = {}) => ({ "Idempotency-Key": key, ...headers });
const createCounter = (
  key: string,
  headers: Record<string, string>,
  body: Record<string, unknown> = { label: "idem" },
) => call("POST", "/v1/counters", { body, headers: keyed(key, headers) });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function resourcesOwnedBy(owner: string): Promise<number> {
  const row = await env.DB.prepare("SELECT COUNT(*) AS n FROM resources WHERE owner = ?")
    .bind(owner)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

/** Puts the newest key back in flight (as if its first request were still running), or lapses its lock. */
async function setNewestKey(state: "in_flight", expiresAt: number): Promise<void> {
  await env.DB.prepare(
    "UPDATE idempotency_keys SET state = ?, response = NULL, expires_at = ? WHERE id = (SELECT id FROM " +
      "idempotency_keys ORDER BY created_at DESC LIMIT 1)",
  )
    .bind(state, expiresAt)
    .run();
}

describe("Idempotency-Key", () => {
  it("replays the first answer, token included, and charges once", async () => {
    const { token, tokenId } = await buyCredits(1);
    const key = crypto.randomUUID();
    const first = await createCounter(key, bearer(token));
    expect(first.status).toBe(201);
    expect(first.headers.get("Idempotent-Replayed")).toBeNull();
    const firstBody = await first.text();
    const spent = (await balanceOf(token)).spent_usd;
    expect(spent).toBeCloseTo(CREATE_USD, 6);

    const again = await createCounter(key, bearer(token));
    expect(again.status).toBe(201);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(again.headers.get("content-type")).toContain("application/json");
    expect(again.headers.get("X-Request-Id")).toMatch(/^req_/);
    expect(again.headers.get("X-Request-Id")).not.toBe(first.headers.get("X-Request-Id"));
    expect(again.headers.get("RateLimit-Limit")).toBe(env.RATE_LIMIT_PER_MINUTE);
    expect(again.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(await again.text()).toBe(firstBody);
    expect((await balanceOf(token)).spent_usd).toBe(spent);
    expect(await resourcesOwnedBy(tokenId)).toBe(1);

    // The replayed management token is the real one.
    const { id, management_token } = JSON.parse(firstBody) as { id: string; management_token: string };
    expect((await call("GET", `/v1/resources/${id}`, { headers: bearer(management_token) })).status).toBe(200);
  });

  it("refuses the same key with another body or path: 422 idempotency_mismatch", async () => {
    const { token } = await buyCredits(1);
    const key = crypto.randomUUID();
    expect((await createCounter(key, bearer(token), { label: "one" })).status).toBe(201);
    const other = await createCounter(key, bearer(token), { label: "two" });
    expect(other.status).toBe(422);
    const problem = await json(other);
    expect(problem.code).toBe("idempotency_mismatch");
    expect(other.headers.get("content-type")).toBe("application/problem+json");
    const otherPath = await call("POST", "/v1/credits/subtokens", {
      body: { label: "one" },
      headers: keyed(key, bearer(token)),
    });
    expect((await json(otherPath)).code).toBe("idempotency_mismatch");
  });

  it("answers 409 idempotency_in_flight while the first request runs, and takes over a lapsed lock", async () => {
    const { token, tokenId } = await buyCredits(1);
    const key = crypto.randomUUID();
    const first = await createCounter(key, bearer(token));
    expect(first.status).toBe(201);
    const made = await json<{ id: string; management_token: string }>(first);
    await setNewestKey("in_flight", Date.now() + 60_000);

    const busy = await createCounter(key, bearer(token));
    expect(busy.status).toBe(409);
    expect((await json(busy)).code).toBe("idempotency_in_flight");
    expect(busy.headers.get("Retry-After")).toBe("1");
    // A different body is a mismatch even while the first one runs.
    expect((await json(await createCounter(key, bearer(token), { label: "other" }))).code).toBe("idempotency_mismatch");

    // A request that never finished (a crashed isolate) holds the key only until its lock lapses. Its resource was
    // made and paid for all the same: the retry finds it (the token derives from the key), and pays nothing more.
    await setNewestKey("in_flight", Date.now() - 1);
    const retried = await createCounter(key, bearer(token));
    expect(retried.status).toBe(201);
    expect(retried.headers.get("Idempotent-Replayed")).toBeNull();
    expect(await json(retried)).toMatchObject({ id: made.id, management_token: made.management_token });
    expect(await resourcesOwnedBy(tokenId)).toBe(1);
    expect((await balanceOf(token)).spent_usd).toBeCloseTo(CREATE_USD, 6);
    // From then on the key replays as usual.
    expect((await createCounter(key, bearer(token))).headers.get("Idempotent-Replayed")).toBe("true");
  });

  it("a lost answer's retry after its resource ended makes a new one: an ended id is never revived", async () => {
    const { token, tokenId } = await buyCredits(1);
    const key = crypto.randomUUID();
    const made = await json<{ id: string; management_token: string }>(await createCounter(key, bearer(token)));
    expect((await call("DELETE", `/v1/resources/${made.id}`, { headers: bearer(made.management_token) })).status).toBe(
      200,
    );
    await setNewestKey("in_flight", Date.now() - 1);
    const retried = await createCounter(key, bearer(token));
    expect(retried.status).toBe(201);
    const again = await json<{ id: string; management_token: string }>(retried);
    expect(again.id).not.toBe(made.id);
    expect((await call("GET", `/v1/resources/${made.id}`, { headers: bearer(made.management_token) })).status).toBe(
      410,
    );
    expect(await resourcesOwnedBy(tokenId)).toBe(2);
  });

  it("a key used after its 24 h makes a new resource, even for the same request while the first lives", async () => {
    const { token, tokenId } = await buyCredits(1);
    const key = crypto.randomUUID();
    const made = await json<{ id: string }>(await createCounter(key, bearer(token)));
    const dayAgo = Date.now() - 24 * 3600 * 1000 - 1;
    await env.DB.prepare("UPDATE resources SET created_at = ? WHERE id = ?").bind(dayAgo, made.id).run();
    await env.DB.prepare(
      "UPDATE idempotency_keys SET expires_at = ? WHERE id = (SELECT id FROM idempotency_keys ORDER BY " +
        "created_at DESC LIMIT 1)",
    )
      .bind(dayAgo)
      .run();
    const again = await createCounter(key, bearer(token));
    expect(again.status).toBe(201);
    expect(again.headers.get("Idempotent-Replayed")).toBeNull();
    expect((await json<{ id: string }>(again)).id).not.toBe(made.id);
    expect(await resourcesOwnedBy(tokenId)).toBe(2);
    expect((await balanceOf(token)).spent_usd).toBeCloseTo(2 * CREATE_USD, 6);
  });

  it("a create paid by credit under a key signs its events with a secret the retry derives again", async () => {
    const { token } = await buyCredits(1);
    const key = crypto.randomUUID();
    const body = { label: "signed", notify_url: "https://example.com/hook" };
    const first = await json<{ id: string; signing_secret: string }>(await createCounter(key, bearer(token), body));
    expect(first.signing_secret).toMatch(/^whsec_/);
    await setNewestKey("in_flight", Date.now() - 1);
    const retried = await json<{ id: string; signing_secret: string }>(await createCounter(key, bearer(token), body));
    expect(retried).toMatchObject({ id: first.id, signing_secret: first.signing_secret });
    // Another key, or no key, gets another secret.
    expect(
      (await json<{ signing_secret: string }>(await createCounter(crypto.randomUUID(), bearer(token), body)))
        .signing_secret,
    ).not.toBe(first.signing_secret);
  });

  it("scopes keys to the credential: two callers with one key get their own resources", async () => {
    const a = await buyCredits(1);
    const b = await buyCredits(1);
    const key = "shared-key-1";
    const ra = await createCounter(key, bearer(a.token));
    const rb = await createCounter(key, bearer(b.token));
    expect([ra.status, rb.status]).toEqual([201, 201]);
    expect(rb.headers.get("Idempotent-Replayed")).toBeNull();
    expect((await json(ra)).id).not.toBe((await json(rb)).id);
    expect((await balanceOf(a.token)).spent_usd).toBeCloseTo(CREATE_USD, 6);
    expect((await balanceOf(b.token)).spent_usd).toBeCloseTo(CREATE_USD, 6);
  });

  it("20 parallel creates with one key: one resource, one charge", async () => {
    const { token, tokenId } = await buyCredits(1);
    const key = crypto.randomUUID();
    const results = await Promise.all(Array.from({ length: 20 }, () => createCounter(key, bearer(token))));
    const statuses = results.map((r) => r.status);
    expect(
      statuses.every((s) => s === 201 || s === 409),
      statuses.join(","),
    ).toBe(true);
    const created = results.filter((r) => r.status === 201);
    expect(created.filter((r) => r.headers.get("Idempotent-Replayed") === null)).toHaveLength(1);
    const ids = new Set(await Promise.all(created.map(async (r) => (await json(r)).id as string)));
    expect(ids.size).toBe(1);
    for (const busy of results.filter((r) => r.status === 409))
      expect((await json(busy)).code).toBe("idempotency_in_flight");

    expect(await resourcesOwnedBy(tokenId)).toBe(1);
    expect((await balanceOf(token)).spent_usd).toBeCloseTo(CREATE_USD, 6);
    const later = await createCounter(key, bearer(token));
    expect(later.headers.get("Idempotent-Replayed")).toBe("true");
    expect((await json(later)).id).toBe([...ids][0]);
  });

  it("releases the key after a failed call, so the same key can be retried with a fixed request", async () => {
    const { token, tokenId } = await buyCredits(1);
    const key = crypto.randomUUID();
    const invalid = await createCounter(key, bearer(token), { initial: "five" });
    expect(invalid.status).toBe(422);
    expect((await json(invalid)).code).toBe("validation_failed");
    const fixed = await createCounter(key, bearer(token), { initial: 5 });
    expect(fixed.status).toBe(201);
    expect(fixed.headers.get("Idempotent-Replayed")).toBeNull();
    expect(await resourcesOwnedBy(tokenId)).toBe(1);
  });

  it("scopes x402 calls to the payer: a retry with a newly signed payment replays and leaves it unused", async () => {
    const terms = await json<PaymentRequired>(await call("POST", "/v1/counters", { body: {} }));
    const priceMicro = Number(terms.accepts[0]!.maxAmountRequired);
    const payerKey = generatePrivateKey();
    const key = crypto.randomUUID();
    const pay = async (k = payerKey) => {
      const { header, name } = await signPayment({ priceMicro, key: k });
      return { [name]: header };
    };
    const first = await call("POST", "/v1/counters", { body: {}, headers: keyed(key, await pay()) });
    expect(first.status).toBe(201);
    const again = await call("POST", "/v1/counters", { body: {}, headers: keyed(key, await pay()) });
    expect(again.status).toBe(201);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(again.headers.get("X-PAYMENT-RESPONSE")).toBe(first.headers.get("X-PAYMENT-RESPONSE"));
    const id = (await json(first)).id as string;
    expect((await json(again)).id).toBe(id);
    const payer = await env.DB.prepare("SELECT owner FROM resources WHERE id = ?").bind(id).first<{ owner: string }>();
    const payments = await env.DB.prepare("SELECT COUNT(*) AS n FROM payments WHERE payer = ?")
      .bind(payer!.owner.toLowerCase())
      .first<{ n: number }>();
    expect(payments?.n).toBe(1);

    // Another payer with the same key is someone else.
    const other = await call("POST", "/v1/counters", {
      body: {},
      headers: keyed(key, await pay(generatePrivateKey())),
    });
    expect(other.status).toBe(201);
    expect(other.headers.get("Idempotent-Replayed")).toBeNull();
  });

  it("refuses a key longer than 255 characters and stores nothing for unkeyed calls", async () => {
    const { token } = await buyCredits(1);
    const tooLong = await createCounter("k".repeat(256), bearer(token));
    expect(tooLong.status).toBe(400);
    const problem = await json(tooLong);
    expect(problem.code).toBe("invalid_request");
    expect(problem.detail).toContain("Idempotency-Key");
    expect((await createCounter("k".repeat(255), bearer(token))).status).toBe(201);

    const before = await env.DB.prepare("SELECT COUNT(*) AS n FROM idempotency_keys").first<{ n: number }>();
    expect((await call("POST", "/v1/counters", { body: {}, headers: bearer(token) })).status).toBe(201);
    const after = await env.DB.prepare("SELECT COUNT(*) AS n FROM idempotency_keys").first<{ n: number }>();
    expect(after?.n).toBe(before?.n);
  });
});
