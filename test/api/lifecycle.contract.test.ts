/**
 * The contract every kind in the registry must meet: create → status → extend →
 * export → cancel; bad bodies → 422 with paths; wrong or missing tokens →
 * 401/403 and no charge; expiry (driven by the alarm) → 410 and no data left.
 */
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { KINDS } from "../../src/resources/registry";
import {
  balanceOf,
  buyCredits,
  call,
  createResource,
  expire,
  json,
  managed,
  stubOf,
  r2Keys,
  type PaymentRequired,
  type Problem,
  type ResourceExport,
  type ResourceRecord,
} from "../harness";
import { exampleBody, exampleRequest, resourceFixture } from "./examples";
import type { AnyKind } from "../../src/kind/kind";

async function storageIsEmpty(id: string): Promise<boolean> {
  return runInDurableObject(stubOf(id), async (_obj, state) => {
    const tables = state.storage.sql
      .exec(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\' AND name " +
          "NOT LIKE 'sqlite_%'",
      )
      .toArray();
    return tables.length === 0 && (await state.storage.getAlarm()) === null;
  });
}

/**
 * Waits (boundedly) until the resource's alarm is set and not due now: no alarm run is pending or in
 * progress (a live resource always has one, for its expiry; while a run is under way none is set).
 */
async function settledAlarm(id: string): Promise<void> {
  for (let i = 0; i < 50; i++) {
    const at = await runInDurableObject(stubOf(id), (_obj, state) => state.storage.getAlarm());
    if (at !== null && at > Date.now() + 1000) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the alarm of ${id} stayed due`);
}

/** A paid operation whose example succeeds on a fresh resource on its own (no `after`): it writes data where it can. */
function sampleOp(kind: AnyKind) {
  const alone = kind.ops.filter((op) => op.priceMicro > 0 && !op.servesObject && !op.example?.after);
  const op = alone.find((o) => o.method !== "get") ?? alone[0];
  if (!op) throw new Error(`${kind.kind}: no paid operation runs on a fresh resource`);
  return op;
}

describe.each(KINDS.map((k) => [k.kind, k] as const))("%s", (kindName, kind) => {
  // The kind's published create example (its contract fixture lives with the kind) and a paid operation's.
  let valid: Record<string, unknown>;
  beforeAll(async () => {
    valid = await exampleBody(kind);
  });
  const sample = sampleOp(kind);
  const callSample = (id: string, headers: Record<string, string>) => {
    const req = exampleRequest(kind, sample, id);
    return call(req.method, req.path, { body: req.body, headers: { ...req.headers, ...headers } });
  };

  it("create → status → extend → export → cancel", async () => {
    const { record, id, mgmt, token } = await resourceFixture(kind, { ttl_seconds: 86400 });
    expect(record).toMatchObject({
      kind: kindName,
      family: kind.family,
      state: "active",
      charged_usd: kind.dayPriceMicro / 1e6,
    });
    expect(mgmt).toMatch(/^zvm_/);
    expect(record.urls.self).toBe(`https://zeitvault.test/v1/resources/${id}`);

    const status = await call("GET", `/v1/resources/${id}`, { headers: managed(mgmt) });
    expect(status.status).toBe(200);
    const statusBody = await json(status);
    expect(statusBody.management_token).toBeUndefined();
    expect(statusBody.expires_at).toBe(record.expires_at);

    // Two more days, or as many as the kind's lifetime allows (blobs live 48 h at most).
    const days = Math.min(2, kind.maxTtlSeconds / 86400 - 1);
    const extended = await call("POST", `/v1/resources/${id}/extend`, {
      body: { ttl_seconds: days * 86400 },
      headers: managed(mgmt, token),
    });
    expect(extended.status, await extended.clone().text()).toBe(200);
    const ext = await json<ResourceRecord>(extended);
    expect(Date.parse(ext.expires_at) - Date.parse(record.expires_at)).toBe(days * 86400 * 1000);
    expect(ext.charged_usd).toBeCloseTo(((1 + days) * kind.dayPriceMicro) / 1e6, 6);

    const exported = await call("GET", `/v1/resources/${id}/export`, { headers: managed(mgmt) });
    expect(exported.status).toBe(200);
    const exp = await json<ResourceExport<unknown>>(exported);
    expect(exp.resource.id).toBe(id);
    expect(exp.data).toBeDefined();

    const cancelled = await call("DELETE", `/v1/resources/${id}`, { headers: managed(mgmt) });
    expect(cancelled.status).toBe(200);
    expect((await json(cancelled)).state).toBe("cancelled");

    const after = await call("GET", `/v1/resources/${id}`, { headers: managed(mgmt) });
    expect(after.status).toBe(410);
    const gone = await json(after);
    expect(gone).toMatchObject({ code: "resource_cancelled", resource: { id, state: "cancelled" } });
    expect(await storageIsEmpty(id)).toBe(true);
    expect(await r2Keys(id)).toEqual([]);

    const balance = await balanceOf(token);
    expect(balance.spent_usd).toBeCloseTo(((1 + days) * kind.dayPriceMicro) / 1e6, 6);
  });

  it("bad bodies → 422 naming the field, and nothing is charged", async () => {
    const { token } = await buyCredits(1);
    for (const [body, path] of [
      [{ ...valid, ttl_seconds: 59 }, "ttl_seconds"],
      [{ ...valid, ttl_seconds: kind.maxTtlSeconds + 1 }, "ttl_seconds"],
      [{ ...valid, label: "x".repeat(201) }, "label"],
      [{ ...valid, notify_url: "ftp://example.com" }, "notify_url"],
    ] as const) {
      const res = await call("POST", `/v1/${kindName}`, { body, headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(422);
      const problem = await json<Problem>(res);
      expect(problem.code).toBe("validation_failed");
      expect(problem.errors!.map((e: { path: string }) => e.path)).toContain(path);
    }
    const malformed = await call("POST", `/v1/${kindName}`, {
      body: "{not json",
      headers: { authorization: `Bearer ${token}` },
    });
    expect(malformed.status).toBe(400);
    expect((await json(malformed)).code).toBe("invalid_request");
    expect((await balanceOf(token)).spent_usd).toBe(0);
  });

  it("wrong or missing tokens → 401/403 and no charge", async () => {
    const { token } = await buyCredits(1);
    const a = await createResource(kindName, token, valid);
    const b = await createResource(kindName, token, valid);
    const spent = (await balanceOf(token)).spent_usd;
    const op = (headers: Record<string, string>) => callSample(a.id, headers);

    expect((await op({ "x-credit-token": token })).status).toBe(401); // no management token
    expect((await op(managed(b.mgmt, token))).status).toBe(403); // another resource's token
    const forged = a.mgmt.slice(0, -8) + "AAAAAAAA";
    expect((await op(managed(forged, token))).status).toBe(401); // checksum fails
    expect((await call("GET", `/v1/resources/${a.id}`, { headers: managed(b.mgmt) })).status).toBe(403);
    expect((await call("DELETE", `/v1/resources/${a.id}`)).status).toBe(401);
    expect(
      (await call("POST", `/v1/${kindName}`, { body: valid, headers: { authorization: "Bearer zv_nope" } })).status,
    ).toBe(401);
    const unpaid = await op(managed(a.mgmt));
    expect(unpaid.status).toBe(402);
    expect((await json<PaymentRequired>(unpaid)).accepts[0]!.maxAmountRequired).toBe(String(sample.priceMicro));
    expect((await balanceOf(token)).spent_usd).toBe(spent);

    const ok = await op(managed(a.mgmt, token));
    expect(ok.status, await ok.clone().text()).toBe(200);
  });

  it("expires by its alarm: 410 afterwards and no data left", async () => {
    const { token } = await buyCredits(1);
    const { id, mgmt } = await createResource(kindName, token, valid);
    const stub = stubOf(id);
    // Some data first (an entry, a message, a stamp), so there is something to delete.
    const before = await callSample(id, managed(mgmt, token));
    expect(before.status, await before.clone().text()).toBe(200);
    await settledAlarm(id); // work the op made due at once (a drip's release) runs by itself first
    // Not yet due: the alarm re-arms and nothing changes.
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect((await call("GET", `/v1/resources/${id}`, { headers: managed(mgmt) })).status).toBe(200);

    await expire(id);

    const res = await call("GET", `/v1/resources/${id}`, { headers: managed(mgmt) });
    expect(res.status).toBe(410);
    expect((await json(res)).code).toBe("resource_expired");
    const op = await callSample(id, managed(mgmt, token));
    expect(op.status).toBe(410);
    expect(await storageIsEmpty(id)).toBe(true);
    expect(await r2Keys(id)).toEqual([]);
    const row = await env.DB.prepare("SELECT state FROM resources WHERE id = ?").bind(id).first();
    expect(row).toEqual({ state: "expired" });
  });
});
