/**
 * A creation the process dies in (durable-objects/resource/creation.ts): the object writes down
 * that it is being made before it pays, and its alarm undoes whatever a dead process left behind
 * (the charge refunded, the index row deleted, the storage cleared), because the caller never saw
 * the management token. The deaths are injected (test-faults.ts) into the object's create, called
 * as the worker calls it.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { hashToken, issueManagementToken, parseCreditToken } from "../../src/auth/tokens";
import { lifetimePriceMicro } from "../../src/money/prices";
import { requireKind } from "../../src/resources/registry";
import type { CreateInput, ResourceFaults } from "../../src/rpc/resource";
import type { Payer } from "../../src/money/payment";
import { CREATION_RECOVERY_MS } from "../../durable-objects/resource/creation";
import { ORIGIN, balanceOf, buyCredits, call, createResource, json, managed, storageDump, stubOf, usd } from "../harness";

const TTL = 3600;
const price = lifetimePriceMicro(requireKind("counters"), TTL);

/** What the worker hands the object for `POST /v1/counters {"ttl_seconds": 3600}`. */
function createInput(payer: Payer, owner: string) {
  const mgmt = issueManagementToken();
  const id = mgmt.parts.resourceId;
  const input: CreateInput = {
    id, kind: "counters", owner, mgmtHash: mgmt.hash, label: null, notifyUrl: null, sealedSecret: null, publicId: null, baseUrl: ORIGIN,
    configJson: JSON.stringify(requireKind("counters").createSchema.parse({})), sealedJson: "null", ttlSeconds: TTL, priceMicro: price, payer, requestId: `req_${id}`,
  };
  return { id, mgmt: mgmt.token, input };
}

async function creditPayer() {
  const { token } = await buyCredits(1);
  const parts = parseCreditToken(token)!;
  return { token, payer: { type: "credit" as const, ...parts, tokenHash: hashToken(token) }, owner: parts.tokenId };
}

/** The object's create RPC, as the worker calls it (typed by hand: the stub's inferred type is too deep for tsc here). */
const createOn = (id: string, input: CreateInput) =>
  (stubOf(id) as unknown as { create(input: CreateInput): Promise<{ ok: boolean; error?: { detail: string } }> }).create(input);
const recordStatus = async (id: string, mgmt: string) => (await call("GET", `/v1/resources/${id}`, { headers: managed(mgmt) })).status;
const alarmAt = (id: string) => runInDurableObject(stubOf(id), (_o, state) => state.storage.getAlarm());

async function dieIn(point: NonNullable<ResourceFaults["dieInCreate"]>, payer: Payer, owner: string) {
  const created = createInput(payer, owner);
  await stubOf(created.id).injectFaults({ dieInCreate: point });
  const result = await createOn(created.id, created.input);
  expect(result.error?.detail).toContain(`died ${point}`);
  return created;
}

describe("a creation the process dies in", () => {
  for (const point of ["after-charge", "after-commit", "after-index"] as const) {
    it(`dying ${point}: the charge taken is refunded by the alarm, and nothing of the resource is left`, async () => {
      const { token, payer, owner } = await creditPayer();
      const { id, mgmt } = await dieIn(point, payer, owner);
      // The dead process had been charged, and (past the commit) had made and maybe indexed the resource.
      expect((await balanceOf(token)).balance_usd).toBeCloseTo(1 - price / 1e6, 6);
      expect(await recordStatus(id, mgmt)).toBe(point === "after-charge" ? 404 : 200);
      const armed = await alarmAt(id);
      expect(armed).not.toBeNull();
      expect(armed! - Date.now()).toBeGreaterThan(60_000); // the backstop waits well past a creation's own time

      expect(await runDurableObjectAlarm(stubOf(id))).toBe(true);
      expect((await balanceOf(token)).balance_usd).toBe(1);
      expect(await recordStatus(id, mgmt)).toBe(404);
      expect(await storageDump(id)).toBe("");
      expect(await alarmAt(id)).toBeNull();
      // The signed receipts leave out a charge that was refunded.
      const receipts = await json(await call("GET", "/v1/receipts", { headers: { authorization: `Bearer ${token}` } }));
      expect(receipts.statement.charges).toEqual([]);
      // A second alarm run, had the runtime retried, gives back nothing more.
      await runDurableObjectAlarm(stubOf(id));
      expect((await balanceOf(token)).balance_usd).toBe(1);
    });
  }

  it("paid outside the object (x402, the free tier): the half-made resource is removed, no account is asked", async () => {
    const { id, mgmt } = await dieIn("after-index", { type: "prepaid" }, "0x0000000000000000000000000000000000000001");
    expect(await recordStatus(id, mgmt)).toBe(200);
    await runDurableObjectAlarm(stubOf(id));
    expect(await recordStatus(id, mgmt)).toBe(404);
    expect(await storageDump(id)).toBe("");
  });

  it("a finished creation leaves no record behind: its alarms are the resource's own, and a call answers", async () => {
    const { token } = await buyCredits(1);
    const { id, mgmt } = await createResource("counters", token, { ttl_seconds: TTL });
    expect(await storageDump(id)).not.toContain("resource_creation");
    const armed = await alarmAt(id);
    expect(armed! - Date.now()).toBeGreaterThan(CREATION_RECOVERY_MS); // the expiry or a settlement, not the backstop's 5 minutes
    await runDurableObjectAlarm(stubOf(id));
    expect(await recordStatus(id, mgmt)).toBe(200);
    expect((await balanceOf(token)).balance_usd).toBeCloseTo(1 - price / 1e6, 6);
  });

  it("a creation the account refuses (402) charges nothing and leaves nothing", async () => {
    const { token, payer, owner } = await creditPayer();
    const created = createInput(payer, owner);
    const result = await createOn(created.id, { ...created.input, priceMicro: usd(2) });
    expect(result.ok).toBe(false);
    expect((await balanceOf(token)).balance_usd).toBe(1);
    expect(await storageDump(created.id)).toBe("");
    expect(await alarmAt(created.id)).toBeNull();
  });
});
