/**
 * A create or extend the process dies in (durable-objects/resource/direct-charges.ts): the object
 * writes the charge down before it takes it, and its alarm gives back what a dead process left
 * behind; a creation is undone with it (index row and storage removed), because the caller never saw
 * the management token. The deaths are injected (test-faults.ts): into the object's create, called
 * as the worker calls it, and into an extend through the API.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { hashToken, issueManagementToken, parseCreditToken } from "../../src/auth/tokens";
import { lifetimePriceMicro } from "../../src/money/prices";
import { requireKind } from "../../src/resources/registry";
import type { CreateInput } from "../../src/rpc/resource";
import type { ResourceFaults } from "../../src/rpc/resource-faults";
import type { Payer } from "../../src/money/payment";
import { PENDING_RECOVERY_MS } from "../../durable-objects/resource/direct-charges";
import { env } from "cloudflare:test";
import {
  ORIGIN,
  advance,
  balanceOf,
  buyCredits,
  call,
  createResource,
  json,
  managed,
  storageDump,
  stubOf,
  usd,
  type Receipt,
} from "../harness";

const TTL = 3600;
const price = lifetimePriceMicro(requireKind("counters"), TTL);

/** What the worker hands the object for `POST /v1/counters {"ttl_seconds": 3600}`. */
function createInput(payer: Payer, owner: string) {
  const mgmt = issueManagementToken();
  const id = mgmt.parts.resourceId;
  const input: CreateInput = {
    id,
    kind: "counters",
    owner,
    mgmtHash: mgmt.hash,
    label: null,
    notifyUrl: null,
    sealedSecret: null,
    publicId: null,
    baseUrl: ORIGIN,
    configJson: JSON.stringify(requireKind("counters").createSchema.parse({})),
    sealedJson: "null",
    ttlSeconds: TTL,
    priceMicro: price,
    payer,
    requestId: `req_${id}`,
  };
  return { id, mgmt: mgmt.token, input };
}

async function creditPayer() {
  const { token } = await buyCredits(1);
  const parts = parseCreditToken(token)!;
  return { token, payer: { type: "credit" as const, ...parts, tokenHash: hashToken(token) }, owner: parts.tokenId };
}

/**
 * The object's create RPC, as the worker calls it (typed by hand: the stub's inferred type is too deep for tsc here).
 */
const createOn = (id: string, input: CreateInput) =>
  (
    stubOf(id) as unknown as { create(input: CreateInput): Promise<{ ok: boolean; error?: { detail: string } }> }
  ).create(input);
const recordStatus = async (id: string, mgmt: string) =>
  (await call("GET", `/v1/resources/${id}`, { headers: managed(mgmt) })).status;
const alarmAt = (id: string) => runInDurableObject(stubOf(id), (_o, state) => state.storage.getAlarm());

async function dieIn(point: NonNullable<ResourceFaults["dieAt"]>, payer: Payer, owner: string) {
  const created = createInput(payer, owner);
  await stubOf(created.id).injectFaults({ dieAt: point });
  const result = await createOn(created.id, created.input);
  expect(result.error?.detail).toContain(`died ${point}`);
  return created;
}

describe("a create the process dies in", () => {
  for (const point of ["create-after-charge", "create-after-commit", "create-after-index"] as const) {
    it(`dying ${point}: the charge taken is refunded by the alarm, and nothing of the resource is left`, async () => {
      const { token, payer, owner } = await creditPayer();
      const { id, mgmt } = await dieIn(point, payer, owner);
      // The dead process had been charged, and (past the commit) had made and maybe indexed the resource.
      expect((await balanceOf(token)).balance_usd).toBeCloseTo(1 - price / 1e6, 6);
      expect(await recordStatus(id, mgmt)).toBe(point === "create-after-charge" ? 404 : 200);
      const armed = await alarmAt(id);
      expect(armed).not.toBeNull();
      expect(armed! - Date.now()).toBeGreaterThan(60_000); // the backstop waits well past a creation's own time

      expect(await runDurableObjectAlarm(stubOf(id))).toBe(true);
      expect((await balanceOf(token)).balance_usd).toBe(1);
      expect(await recordStatus(id, mgmt)).toBe(404);
      expect(await storageDump(id)).toBe("");
      expect(await alarmAt(id)).toBeNull();
      // The signed receipts leave out a charge that was refunded.
      const receipts = await json<Receipt>(
        await call("GET", "/v1/receipts", { headers: { authorization: `Bearer ${token}` } }),
      );
      expect(receipts.statement.charges).toEqual([]);
      // A second alarm run, had the runtime retried, gives back nothing more.
      await runDurableObjectAlarm(stubOf(id));
      expect((await balanceOf(token)).balance_usd).toBe(1);
    });
  }

  it("paid outside the object (x402, free tier): the half-made resource is removed, no account is asked", async () => {
    const { id, mgmt } = await dieIn(
      "create-after-index",
      { type: "prepaid" },
      "0x0000000000000000000000000000000000000001",
    );
    expect(await recordStatus(id, mgmt)).toBe(200);
    await runDurableObjectAlarm(stubOf(id));
    expect(await recordStatus(id, mgmt)).toBe(404);
    expect(await storageDump(id)).toBe("");
  });

  it("a finished creation leaves no record behind: its alarms are the resource's own, and a call answers", async () => {
    const { token } = await buyCredits(1);
    const { id, mgmt } = await createResource("counters", token, { ttl_seconds: TTL });
    expect(await storageDump(id)).toContain("pending_charges: []");
    const armed = await alarmAt(id);
    // the expiry or a settlement, not the backstop's 5 minutes
    expect(armed! - Date.now()).toBeGreaterThan(PENDING_RECOVERY_MS);
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

describe("an extend the process dies in", () => {
  it("dying after the charge: the alarm gives it back, the expiry is as before, the resource lives on", async () => {
    const { token } = await buyCredits(1);
    const { id, mgmt, record } = await createResource("counters", token, { ttl_seconds: TTL });
    const afterCreate = (await balanceOf(token)).balance_usd;
    await stubOf(id).injectFaults({ dieAt: "extend-after-charge" });
    const died = await call("POST", `/v1/resources/${id}/extend`, {
      body: { ttl_seconds: TTL },
      headers: managed(mgmt, token),
    });
    expect(died.status).toBe(500);
    expect((await balanceOf(token)).balance_usd).toBeLessThan(afterCreate);
    // brought forward from the expiry, an hour out
    expect((await alarmAt(id))! - Date.now()).toBeLessThanOrEqual(PENDING_RECOVERY_MS);

    expect(await runDurableObjectAlarm(stubOf(id))).toBe(true);
    expect((await balanceOf(token)).balance_usd).toBe(afterCreate);
    const status = await json(await call("GET", `/v1/resources/${id}`, { headers: managed(mgmt) }));
    expect(status).toMatchObject({ state: "active", expires_at: record.expires_at });
    expect(await storageDump(id)).toContain("pending_charges: []");
    // The alarm is the resource's own again (its expiry), and an extend now goes through, charged once.
    expect((await alarmAt(id))! - Date.now()).toBeGreaterThan(PENDING_RECOVERY_MS);
    const extended = await call("POST", `/v1/resources/${id}/extend`, {
      body: { ttl_seconds: TTL },
      headers: managed(mgmt, token),
    });
    expect(extended.status).toBe(200);
    expect((await balanceOf(token)).balance_usd).toBeLessThan(afterCreate);
  });

  it("a cancel after the extend's process died: the extend's charge is given back before its row goes", async () => {
    const { token } = await buyCredits(1);
    const { id, mgmt } = await createResource("counters", token, { ttl_seconds: TTL });
    const afterCreate = (await balanceOf(token)).balance_usd;
    await stubOf(id).injectFaults({ dieAt: "extend-after-charge" });
    const died = await call("POST", `/v1/resources/${id}/extend`, {
      body: { ttl_seconds: TTL },
      headers: managed(mgmt, token),
    });
    expect(died.status).toBe(500);
    expect((await balanceOf(token)).balance_usd).toBeLessThan(afterCreate);
    // The cancel comes before the alarm's backstop: the pending charge must not go with the storage.
    const cancelled = await call("DELETE", `/v1/resources/${id}`, { headers: managed(mgmt, token) });
    expect(cancelled.status).toBe(200);
    expect(await storageDump(id)).toBe("");
    expect((await balanceOf(token)).balance_usd).toBe(afterCreate);
    const receipts = await json<{ statement: { charges: { operation: string }[] } }>(
      await call("GET", "/v1/receipts", { headers: { authorization: `Bearer ${token}` } }),
    );
    expect(receipts.statement.charges.map((c) => c.operation)).toEqual(["counters.create"]);
  });

  it("an extend the balance cannot pay (402) takes nothing and leaves no pending charge", async () => {
    const { token } = await buyCredits(0.25); // a counter's 364 days cost $0.364
    const { id, mgmt, record } = await createResource("counters", token, { ttl_seconds: TTL });
    const before = (await balanceOf(token)).balance_usd;
    const refused = await call("POST", `/v1/resources/${id}/extend`, {
      body: { ttl_seconds: 364 * 86400 },
      headers: managed(mgmt, token),
    });
    expect(refused.status).toBe(402);
    expect((await balanceOf(token)).balance_usd).toBe(before);
    expect(await storageDump(id)).toContain("pending_charges: []");
    expect((await json(await call("GET", `/v1/resources/${id}`, { headers: managed(mgmt) }))).expires_at).toBe(
      record.expires_at,
    );
  });
});

describe("a create paid by x402 whose worker dies before it settles the payment", () => {
  const payer = "0x00000000000000000000000000000000000000a1";
  /** The claim runPaid writes in D1 before the work, as the worker that then died left it (or settled it). */
  async function claim(requestId: string, status: "claimed" | "settled") {
    await env.DB.prepare(
      "INSERT INTO payments (network, payer, nonce, amount_micro, operation, status, request_id, " +
        "valid_before, created_at) VALUES ('eip155:84532', ?, ?, ?, 'counters.create', ?, ?, ?, ?)",
    )
      .bind(
        payer,
        `0x${crypto.randomUUID().replaceAll("-", "")}`,
        price,
        status,
        requestId,
        Date.now() + 3_600_000,
        Date.now(),
      )
      .run();
  }
  const claimOf = (requestId: string) =>
    env.DB.prepare("SELECT status FROM payments WHERE request_id = ?").bind(requestId).first<{ status: string }>();

  for (const settled of [false, true]) {
    it(
      settled
        ? "settled before it died: the resource is paid for and stays"
        : "never settled: the alarm undoes the resource and frees the payment's claim",
      async () => {
        const { id, mgmt, input } = createInput({ type: "prepaid", x402: true }, payer);
        await claim(input.requestId, settled ? "settled" : "claimed");
        const result = await createOn(id, input);
        expect(result.ok).toBe(true);
        // The worker died here: it never told the object. Until the backstop's wait is over, the resource lives.
        expect(await storageDump(id)).toContain("x402");
        await advance(id, 60_000);
        expect(await recordStatus(id, mgmt)).toBe(200);
        await advance(id, PENDING_RECOVERY_MS);
        expect(await recordStatus(id, mgmt)).toBe(settled ? 200 : 404);
        expect((await claimOf(input.requestId))?.status ?? null).toBe(settled ? "settled" : null);
        if (settled) expect(await storageDump(id)).toContain("pending_charges: []");
        else expect(await storageDump(id)).toBe("");
      },
    );
  }
});
