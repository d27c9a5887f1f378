/** After a full scenario, neither D1 nor any Durable Object's storage holds a token in plain text. */
import { env, listDurableObjectIds, runInDurableObject } from "cloudflare:test";
import { expect, it } from "vitest";
import { buyCredits, call, createResource, json, managed } from "../harness";

async function dumpSqlite(sql: SqlStorage): Promise<string> {
  const tables = sql
    .exec<{ name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'",
    )
    .toArray();
  return tables.map((t) => JSON.stringify(sql.exec(`SELECT * FROM "${t.name}"`).toArray())).join("\n");
}

it("stores no plaintext token anywhere", async () => {
  const { token } = await buyCredits(2);
  const sub = await json<{ credit_token: string }>(
    await call("POST", "/v1/credits/subtokens", {
      body: { cap_usd: 0.5, label: "s", days: 2 },
      headers: { authorization: `Bearer ${token}` },
    }),
  );
  const a = await createResource("counters", token, { label: "a" });
  const b = await createResource("counters", sub.credit_token, { label: "b" });
  await call("POST", `/v1/counters/${a.id}/increment`, { headers: managed(a.mgmt, sub.credit_token) });
  await call("POST", `/v1/resources/${b.id}/extend`, { body: { ttl_seconds: 86400 }, headers: managed(b.mgmt, token) });
  await call("DELETE", `/v1/resources/${b.id}`, { headers: managed(b.mgmt) });
  // Idempotent calls keep their first answer, tokens included, for replay: encrypted, never in clear.
  const keyed = (key: string) => ({ authorization: `Bearer ${token}`, "Idempotency-Key": key });
  const c = await json<{ management_token: string }>(
    await call("POST", "/v1/counters", { body: { label: "c" }, headers: keyed("create-c") }),
  );
  expect(
    (await json(await call("POST", "/v1/counters", { body: { label: "c" }, headers: keyed("create-c") })))
      .management_token,
  ).toBe(c.management_token);
  const keyedSub = await json<{ credit_token: string }>(
    await call("POST", "/v1/credits/subtokens", {
      body: { cap_usd: 0.1, label: "k", days: 1 },
      headers: keyed("mint-k"),
    }),
  );
  const kept = await env.DB.prepare("SELECT COUNT(*) AS n FROM idempotency_keys WHERE response IS NOT NULL").first<{
    n: number;
  }>();
  expect(kept?.n).toBe(2);
  // A webhook signing secret is kept sealed: the resource must read it back, but never in clear.
  const hooked = await createResource("counters", token, { notify_url: `${env.TEST_RECEIVER_URL}/ok/secrets-scan` });
  const secrets = [
    token,
    sub.credit_token,
    a.mgmt,
    b.mgmt,
    c.management_token,
    keyedSub.credit_token,
    hooked.mgmt,
    hooked.record.signing_secret!,
  ];

  const tables = await env.DB.prepare(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE " +
      "'_cf_%' AND name NOT LIKE 'd1_%'",
  ).all<{ name: string }>();
  let dump = "";
  for (const { name } of tables.results)
    dump += JSON.stringify((await env.DB.prepare(`SELECT * FROM "${name}"`).all()).results);
  for (const id of await listDurableObjectIds(env.ACCOUNTS)) {
    dump += await runInDurableObject(env.ACCOUNTS.get(id), (_o, state) => dumpSqlite(state.storage.sql));
  }
  for (const id of await listDurableObjectIds(env.RESOURCES)) {
    dump += await runInDurableObject(env.RESOURCES.get(id), (_o, state) => dumpSqlite(state.storage.sql));
  }
  expect(dump).toContain("token_hash"); // the scan did read the credential tables
  for (const secret of secrets) {
    expect(dump).not.toContain(secret);
    expect(dump).not.toContain(secret.slice(6, 40)); // nor its body without the prefix
  }
});
