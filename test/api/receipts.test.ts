/** Receipts: the signed statement adds up to the ledger, verifies against the JWKS, and breaks when edited. */
import { env, runInDurableObject } from "cloudflare:test";
import { compactVerify, createLocalJWKSet, type JWK } from "jose";
import { expect, it } from "vitest";
import { buyCredits, call, createResource, json, managed, type Receipt } from "../harness";

it("a statement equals the ledger and its signature verifies; one edited byte fails", async () => {
  const { token, tokenId } = await buyCredits(2);
  const sub = await json<{ credit_token: string }>(
    await call("POST", "/v1/credits/subtokens", {
      body: { cap_usd: 0.5, label: "w", days: 1 },
      headers: { authorization: `Bearer ${token}` },
    }),
  );
  const { id, mgmt } = await createResource("counters", token, { ttl_seconds: 86400, max: 3 });
  for (let i = 0; i < 5; i++)
    // 3 succeed, 2 refused
    await call("POST", `/v1/counters/${id}/increment`, { headers: managed(mgmt, sub.credit_token) });
  await createResource("counters", sub.credit_token, { ttl_seconds: 2 * 86400 });

  const res = await call("GET", "/v1/receipts", { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  const { statement, signature } = await json<Receipt>(res);
  expect(statement.token_id).toBe(tokenId);
  expect(statement.charges.map((c: { operation: string }) => c.operation).sort()).toEqual([
    "counters.create",
    "counters.create",
    "counters.increment",
    "counters.increment",
    "counters.increment",
  ]);

  const ledger = await runInDurableObject(env.ACCOUNTS.get(env.ACCOUNTS.idFromName(tokenId)), (_o, state) =>
    state.storage.sql.exec<{ type: string; amount: number }>("SELECT type, amount FROM ledger").toArray(),
  );
  const net =
    ledger.filter((r) => r.type === "charge").reduce((s, r) => s + r.amount, 0) -
    ledger.filter((r) => r.type === "refund").reduce((s, r) => s + r.amount, 0);
  expect(statement.total_usd).toBeCloseTo(net / 1e6, 6);
  expect(statement.total_usd).toBeCloseTo(0.001 + 0.0003 + 0.002, 6);
  expect(statement.balance_usd).toBeCloseTo(2 - statement.total_usd, 6);

  const keys = createLocalJWKSet(await json<{ keys: JWK[] }>(await call("GET", "/.well-known/jwks.json")));
  const verified = await compactVerify(signature, keys);
  expect(JSON.parse(new TextDecoder().decode(verified.payload))).toEqual(statement);

  const [head, payload, sig] = signature.split(".");
  const bytes = atob(payload!.replace(/-/g, "+").replace(/_/g, "/"));
  const edited = bytes.replace('"total_usd":', '"total_usd":9');
  const tampered = `${head}.${btoa(edited).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_")}.${sig}`;
  await expect(compactVerify(tampered, keys)).rejects.toThrow();

  const subStatement = await json<Receipt>(
    await call("GET", "/v1/receipts", { headers: { authorization: `Bearer ${sub.credit_token}` } }),
  );
  expect(subStatement.statement.charges).toHaveLength(4); // its own: 3 increments and 1 create
});

it("validates the period", async () => {
  const { token } = await buyCredits(0.25);
  const res = await call("GET", "/v1/receipts?since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z", {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(res.status).toBe(422);
  expect(
    (await call("GET", "/v1/receipts?since=yesterday", { headers: { authorization: `Bearer ${token}` } })).status,
  ).toBe(422);
});
