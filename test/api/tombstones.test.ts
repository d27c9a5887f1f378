/** The 30-day tombstone: an ended resource answers 410 to its token holder, then 404 once the daily sweep has run. */
import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { expect, it } from "vitest";
import worker from "../../src/index";
import { buyCredits, call, createResource, managed } from "../harness";

it("the daily sweep turns tombstones older than 30 days into 404", async () => {
  const { token } = await buyCredits(0.25);
  const old = await createResource("counters", token, { ttl_seconds: 86400 });
  const recent = await createResource("counters", token, { ttl_seconds: 86400 });
  await call("DELETE", `/v1/resources/${old.id}`, { headers: managed(old.mgmt) });
  await call("DELETE", `/v1/resources/${recent.id}`, { headers: managed(recent.mgmt) });
  await env.DB.prepare("UPDATE resources SET ended_at = ? WHERE id = ?").bind(Date.now() - 31 * 86400 * 1000, old.id).run();

  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "17 3 * * *" }), env, ctx);
  await waitOnExecutionContext(ctx);

  expect((await call("GET", `/v1/resources/${old.id}`, { headers: managed(old.mgmt) })).status).toBe(404);
  expect((await call("GET", `/v1/resources/${recent.id}`, { headers: managed(recent.mgmt) })).status).toBe(410);
});
