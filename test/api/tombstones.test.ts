/** The 30-day tombstone: an ended resource answers 410 to its token holder, then 404 once the daily sweep has run. */
import {
  createExecutionContext,
  createScheduledController,
  env,
  evictDurableObject,
  runDurableObjectAlarm,
  runInDurableObject,
  waitOnExecutionContext,
} from "cloudflare:test";
import { expect, it } from "vitest";
import worker from "../../src/index";
import { buyCredits, call, createResource, managed, stubOf } from "../harness";

it("the daily sweep turns tombstones older than 30 days into 404", async () => {
  const { token } = await buyCredits(0.25);
  const old = await createResource("counters", token, { ttl_seconds: 86400 });
  const recent = await createResource("counters", token, { ttl_seconds: 86400 });
  await call("DELETE", `/v1/resources/${old.id}`, { headers: managed(old.mgmt) });
  await call("DELETE", `/v1/resources/${recent.id}`, { headers: managed(recent.mgmt) });
  await env.DB.prepare("UPDATE resources SET ended_at = ? WHERE id = ?")
    .bind(Date.now() - 31 * 86400 * 1000, old.id)
    .run();

  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "17 3 * * *" }), env, ctx);
  await waitOnExecutionContext(ctx);

  expect((await call("GET", `/v1/resources/${old.id}`, { headers: managed(old.mgmt) })).status).toBe(404);
  expect((await call("GET", `/v1/resources/${recent.id}`, { headers: managed(recent.mgmt) })).status).toBe(410);
});

it("the daily sweep drops x402 claims a month past authorization, except one sent on-chain, unconfirmed", async () => {
  const month = 31 * 86400 * 1000;
  const rows = [
    ["settled", "0xsettled", Date.now() - month],
    ["claimed", null, Date.now() - month], // its process died before releasing it: no money moved
    ["claimed", "0xunconfirmed", Date.now() - month], // kept for reconciliation
    ["claimed", null, Date.now() + 60_000], // its call may still be running
  ] as const;
  const payer = `0x${crypto.randomUUID().replace(/-/g, "")}`;
  for (const [i, [status, tx, validBefore]] of rows.entries()) {
    await env.DB.prepare(
      "INSERT INTO payments (network, payer, nonce, amount_micro, operation, status, tx_hash, request_id, " +
        "valid_before, created_at) VALUES ('eip155:84532', ?, ?, 1000, 'counters.create', ?, ?, 'req_sweep', " +
        "?, ?)",
    )
      .bind(payer, `0x${i}`, status, tx, validBefore, validBefore - 600_000)
      .run();
  }
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "17 3 * * *" }), env, ctx);
  await waitOnExecutionContext(ctx);
  const left = await env.DB.prepare("SELECT nonce FROM payments WHERE payer = ? ORDER BY nonce")
    .bind(payer)
    .all<{ nonce: string }>();
  expect(left.results.map((r) => r.nonce)).toEqual(["0x2", "0x3"]);
});

it("an end that failed part-way answers 410 meanwhile and is finished by the alarm", async () => {
  const { token } = await buyCredits(0.25);
  const blob = await createResource("blobs", token, { ttl_seconds: 86400 });
  const put = await call("PUT", `/v1/blobs/${blob.id}/content`, {
    body: "left behind by a failed cancel",
    headers: { ...managed(blob.mgmt, token), "content-type": "text/plain" },
  });
  expect(put.status).toBe(200);
  // A cancel whose process dies once it is settled and marked ended: data and index still there.
  const stub = env.RESOURCES.get(env.RESOURCES.idFromName(blob.id));
  await stubOf(blob.id).injectFaults({ dieAt: "end-after-mark" });
  expect((await call("DELETE", `/v1/resources/${blob.id}`, { headers: managed(blob.mgmt) })).status).toBe(500);
  expect((await env.BUCKET.list({ prefix: `${blob.id}/` })).objects).not.toEqual([]);
  await evictDurableObject(stub);
  const meanwhile = await call("GET", `/v1/resources/${blob.id}`, { headers: managed(blob.mgmt) });
  expect(meanwhile.status).toBe(410);
  expect((await call("DELETE", `/v1/resources/${blob.id}`, { headers: managed(blob.mgmt) })).status).toBe(410);

  expect(await runDurableObjectAlarm(stub)).toBe(true);
  expect((await env.BUCKET.list({ prefix: `${blob.id}/` })).objects).toEqual([]);
  expect(await env.DB.prepare("SELECT state FROM resources WHERE id = ?").bind(blob.id).first()).toEqual({
    state: "cancelled",
  });
  const tables = await runInDurableObject(stub, (_o, state) =>
    state.storage.sql
      .exec(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\' AND name " +
          "NOT LIKE 'sqlite_%'",
      )
      .toArray(),
  );
  expect(tables).toEqual([]);
});
