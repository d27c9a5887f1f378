/**
 * The tools themselves, through the 1.x SDK client at 2025-11-25: the default surface and its
 * size, the toolsets, the generic tools reaching every kind, uploads and downloads, management,
 * idempotent retries, and the refusals a route makes (tool errors) or the endpoint makes (JSON-RPC errors).
 */
import { SELF } from "cloudflare:test";
import { generatePrivateKey } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { KINDS } from "../../src/resources/registry";
import type { describeKind } from "../../src/mcp/describe-kind";
import { ORIGIN, balanceOf, buyCredits, signPayment, type ResourceRecord } from "../harness";
import {
  connectV1,
  connectV2,
  post,
  wireHeaders,
  type Body,
  type ListedTool,
  type RpcAnswer,
  type ToolAnswer,
  type ToolPage,
  type X402Terms,
} from "./mcp-clients";
import { exampleBody } from "./examples";

type V1 = Awaited<ReturnType<typeof connectV1>>["client"];

/** Calls a tool with the 1.x client; `S` is the shape of the structuredContent the test reads into. */
async function callTool<S = Body>(client: V1, name: string, args: Body = {}, meta?: Body): Promise<ToolAnswer<S>> {
  return (await client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) })) as ToolAnswer<S>;
}

/** A paid counter created through MCP with a credit bearer. */
async function counterViaMcp(initial = 5) {
  const { token } = await buyCredits(1);
  const { client } = await connectV1({ bearer: token });
  const created = await callTool<ResourceRecord & { management_token: string }>(client, "create_counters", {
    initial,
    ttl_seconds: 3600,
  });
  expect(created.isError, created.content[0]?.text).toBeFalsy();
  return { client, token, record: created.structuredContent! };
}

describe("the default surface", () => {
  it("fits every client: at most 40 tools and 32 KB in every revision, the richest included", async () => {
    const heaviest: Record<string, string> = {
      "2024-11-05": "",
      "2025-06-18": "2025-06-18",
      "2025-11-25": "2025-11-25",
    };
    for (const [label, version] of Object.entries(heaviest)) {
      const res = await post({ jsonrpc: "2.0", id: 1, method: "tools/list" }, wireHeaders(version || "2024-11-05"));
      const { result } = (await res.json()) as RpcAnswer<ToolPage>;
      expect(result!.tools.length, label).toBeLessThanOrEqual(40);
      expect(result!.nextCursor, label).toBeUndefined();
      expect(new TextEncoder().encode(JSON.stringify(result)).length, label).toBeLessThanOrEqual(32 * 1024);
    }
    const modern = await post(
      {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/list",
        params: {
          _meta: {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
          },
        },
      },
      wireHeaders("2026-07-28", { "mcp-method": "tools/list" }),
    );
    expect(new TextEncoder().encode(JSON.stringify(((await modern.json()) as Body).result)).length).toBeLessThanOrEqual(
      32 * 1024,
    );
  });

  it("names the tools that reach every kind, free without a credential", async () => {
    const { client } = await connectV1();
    const tools = (await client.listTools()).tools as ListedTool[];
    const names = tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        "list_prices",
        "request_feature",
        "list_kinds",
        "describe_kind",
        "create_resource",
        "call_operation",
        "get_resource",
        "extend_resource",
        "export_resource",
        "cancel_resource",
        "get_balance",
        "buy_credits",
      ]),
    );
    expect(
      names.filter(
        (n) => n.startsWith("create_") && !["create_resource", "create_subtoken", "create_sandbox"].includes(n),
      ),
    ).toEqual([]);
    // 2025-11-25's tool-name rules: 1 to 128 of A-Z a-z 0-9 _ - . and unique.
    for (const name of names) expect(name).toMatch(/^[A-Za-z0-9_.-]{1,128}$/);
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get("call_operation")!.inputSchema.required).toEqual(
      expect.arrayContaining(["kind", "id", "management_token", "operation"]),
    );
    expect(byName.get("extend_resource")!.inputSchema.required).toEqual(
      expect.arrayContaining(["id", "management_token", "ttl_seconds"]),
    );
    expect(byName.get("get_resource")!.description).toMatch(/free/i);
    expect(byName.get("request_feature")!.inputSchema.properties).toHaveProperty("title");
    expect(byName.get("buy_credits")!.annotations).toMatchObject({ readOnlyHint: false, openWorldHint: true });
    expect(byName.get("call_operation")!.annotations).toMatchObject({ destructiveHint: true, openWorldHint: true });
    expect(byName.get("list_kinds")!.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
  });
});

describe("toolsets", () => {
  it("adds the typed tools of families, kinds or all, with their routes' schemas and hints", async () => {
    const { client } = await connectV1({ toolsets: "memory,wakeups" });
    const tools = (await client.listTools()).tools as ListedTool[];
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect([...byName.keys()]).toEqual(
      expect.arrayContaining([
        "create_wakeups",
        "wakeups_fire",
        "create_vaults",
        "queues_lease",
        "create_counters",
        "describe_kind",
      ]),
    );
    expect(byName.has("create_schedules")).toBe(false);
    const create = byName.get("create_counters")!;
    expect(Object.keys(create.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(["initial", "min", "max", "ttl_seconds", "label", "notify_url"]),
    );
    expect(create).toMatchObject({
      title: "Counter: create",
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    });
    expect(create.description).toContain("$0.001 per started day");
    const increment = byName.get("counters_increment")!;
    expect(increment.inputSchema.required).toEqual(expect.arrayContaining(["id", "management_token"]));
    expect(increment.inputSchema.properties).toMatchObject({
      by: { type: "integer", minimum: 1, default: 1 },
      id: { type: "string" },
    });
    expect(increment.outputSchema).toMatchObject({ type: "object", properties: { value: expect.any(Object) } });
    expect(JSON.stringify(increment.outputSchema)).not.toContain('"additionalProperties":false');
    expect(byName.get("create_wakeups")!.inputSchema.oneOf).toEqual([
      { required: ["at"] },
      { required: ["delay_seconds"] },
    ]);
    // Hints from the method and the declaration: PUT replaces, DELETE removes, a declared POST discards, a kind that
    // calls out is open.
    expect(byName.get("vaults_put")!.annotations).toMatchObject({ destructiveHint: true, idempotentHint: true });
    expect(byName.get("queues_ack")!.annotations).toMatchObject({ destructiveHint: true, idempotentHint: false });
    expect(byName.get("queues_push")!.annotations).toMatchObject({ destructiveHint: false });
    expect(byName.get("wakeups_fire")!.annotations).toMatchObject({ openWorldHint: true });
    expect(byName.get("vaults_get")!.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });

    const { token } = await buyCredits(1);
    const typed = await connectV1({ bearer: token, toolsets: "wakeups" });
    const created = await callTool(typed.client, "create_wakeups", {
      url: "https://example.com/hooks/x",
      delay_seconds: 600,
    });
    expect(created.isError, created.content[0]?.text).toBeFalsy();
    const both = await callTool(typed.client, "create_wakeups", {
      url: "https://example.com/hooks/x",
      delay_seconds: 600,
      at: "2030-01-01T00:00:00Z",
    });
    expect(both).toMatchObject({ isError: true, structuredContent: { status: 422, errors: [{ path: "at" }] } });

    const unknown = await post(
      { jsonrpc: "2.0", id: 1, method: "tools/list" },
      wireHeaders(),
      "?toolsets=memory,nonsense",
    );
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({ code: "invalid_request", errors: [{ path: "query.toolsets" }] });
  });
});

describe("output schemas", () => {
  it("describe each kind's create answer: the v2 client checks each structuredContent against its tool", async () => {
    const { token } = await buyCredits(5);
    const { client } = await connectV2({ bearer: token, toolsets: "all" });
    // Every page: the client compiles each outputSchema here, and checks every result of that tool against it.
    expect((await client.listTools()).tools.length).toBeGreaterThan(200);
    for (const kind of KINDS) {
      const created = (await client.callTool({
        name: `create_${kind.kind.replace(/-/g, "_")}`,
        arguments: { ...(await exampleBody(kind)), ttl_seconds: 3600 },
      })) as unknown as ToolAnswer;
      expect(created.isError, `${kind.kind}: ${created.content[0]?.text}`).toBeFalsy();
      expect(created.structuredContent, kind.kind).toMatchObject({ kind: kind.kind });
    }
  }, 120_000);
});

describe("the generic tools", () => {
  it("reach a kind through describe_kind, create_resource and call_operation alone", async () => {
    const { token } = await buyCredits(1);
    const { client } = await connectV1({ bearer: token });
    const kinds = (await callTool(client, "list_kinds")).structuredContent!.kinds as Body[];
    expect(kinds.map((k) => k.kind)).toEqual(KINDS.map((k) => k.kind));
    const described = (await callTool<ReturnType<typeof describeKind>>(client, "describe_kind", { kind: "queues" }))
      .structuredContent!;
    const push = described.operations.find((o) => o.name === "push")!;
    expect(push.input_schema.properties).not.toHaveProperty("management_token");
    const created = await callTool(client, "create_resource", {
      kind: "queues",
      input: { ...described.create.example, ttl_seconds: 3600 },
    });
    const { id, management_token } = created.structuredContent!;
    expect(
      (
        await callTool(client, "call_operation", {
          kind: "queues",
          id,
          management_token,
          operation: "push",
          input: "example" in push ? push.example?.input : undefined,
        })
      ).isError,
    ).toBeFalsy();
    const leased = await callTool(client, "call_operation", {
      kind: "queues",
      id,
      management_token,
      operation: "lease",
      input: { max_messages: 1 },
    });
    expect(leased.structuredContent!.items).toHaveLength(1);
    const wrongOp = await callTool(client, "call_operation", {
      kind: "queues",
      id,
      management_token,
      operation: "increment",
    });
    expect(wrongOp).toMatchObject({
      isError: true,
      structuredContent: { status: 422, errors: [{ path: "operation" }] },
    });
    const badInput = await callTool(client, "call_operation", {
      kind: "queues",
      id,
      management_token,
      operation: "lease",
      input: { max_messages: 0 },
    });
    expect(badInput).toMatchObject({ isError: true, structuredContent: { status: 422 } });
  });

  it("pays with _meta x402/payment, and an idempotency_key makes a retry free", async () => {
    const { client } = await connectV1();
    const refused = await callTool<X402Terms>(client, "create_resource", {
      kind: "counters",
      input: { ttl_seconds: 3600 },
    });
    const terms = refused.structuredContent!;
    const key = generatePrivateKey();
    const pay = async (amount: string) =>
      JSON.parse(atob((await signPayment({ key, priceMicro: Number(amount), version: 2 })).header));
    const args = { kind: "counters", input: { ttl_seconds: 3600, initial: 4 }, idempotency_key: crypto.randomUUID() };
    const created = await callTool(client, "create_resource", args, {
      "x402/payment": await pay(terms.accepts[0]!.amount),
    });
    expect(created._meta?.["x402/payment-response"]).toMatchObject({ success: true });
    const again = await callTool(client, "create_resource", args, {
      "x402/payment": await pay(terms.accepts[0]!.amount),
    });
    expect(again.structuredContent).toMatchObject({ id: created.structuredContent!.id });
    const { id, management_token } = created.structuredContent!;
    const inc = await callTool(
      client,
      "call_operation",
      { kind: "counters", id, management_token, operation: "increment", input: { by: 2 } },
      { "x402/payment": await pay("100") },
    );
    expect(inc.structuredContent).toMatchObject({ value: 6 });
  });
});

describe("route tools", () => {
  it("refuses a replayed x402 authorization, takes x402 v1 in _meta, and forwards an x402 header", async () => {
    const { client } = await connectV1();
    const { header, payer } = await signPayment({ priceMicro: 1000, version: 2 });
    const payload = JSON.parse(atob(header));
    expect(
      (await callTool(client, "create_counters", { ttl_seconds: 3600 }, { "x402/payment": payload })).isError,
    ).toBeFalsy();
    const replay = await callTool(client, "create_counters", { ttl_seconds: 3600 }, { "x402/payment": payload });
    expect(replay).toMatchObject({ isError: true, structuredContent: { status: 409, code: "payment_replayed" } });
    const v1 = await signPayment({ priceMicro: 1000, version: 1 });
    const paidV1 = await callTool(
      client,
      "create_counters",
      { ttl_seconds: 3600 },
      { "x402/payment": JSON.parse(atob(v1.header)) },
    );
    expect(paidV1._meta?.["x402/payment-response"]).toMatchObject({ success: true, payer: v1.payer });
    expect(payer).toMatch(/^0x/);

    const viaHeader = await signPayment({ priceMicro: 1000, version: 2 });
    const res = await post(
      {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "create_counters", arguments: { ttl_seconds: 60 } },
      },
      wireHeaders("2025-11-25", { [viaHeader.name]: viaHeader.header }),
    );
    const body = (await res.json()) as RpcAnswer<ToolAnswer>;
    expect(body.result!.structuredContent!.management_token).toMatch(/^zvm_/);
    expect(body.result!._meta!["x402/payment-response"]).toMatchObject({ success: true });
  });

  it("runs data-plane tools with id and management_token, and the four management tools", async () => {
    const { client, token, record } = await counterViaMcp(5);
    const mgmt = { id: record.id, management_token: record.management_token };
    const spent = (await balanceOf(token)).spent_usd;
    expect((await callTool(client, "counters_increment", { ...mgmt, by: 2 })).structuredContent).toMatchObject({
      value: 7,
    });
    expect((await balanceOf(token)).spent_usd).toBeCloseTo(spent + 0.0001, 6);
    const bad = await callTool(client, "counters_increment", { ...mgmt, by: 0 });
    expect(bad).toMatchObject({
      isError: true,
      structuredContent: { status: 422, code: "validation_failed", errors: [{ path: "by" }] },
    });
    expect((await callTool(client, "get_resource", mgmt)).structuredContent).toMatchObject({
      id: record.id,
      state: "active",
    });
    const extended = await callTool<ResourceRecord>(client, "extend_resource", { ...mgmt, ttl_seconds: 86400 });
    expect(Date.parse(extended.structuredContent!.expires_at)).toBeGreaterThan(Date.parse(record.expires_at));
    expect((await callTool(client, "export_resource", mgmt)).structuredContent).toMatchObject({ data: { value: 7 } });
    expect((await callTool(client, "cancel_resource", mgmt)).structuredContent).toMatchObject({ state: "cancelled" });
    expect(await callTool(client, "get_resource", mgmt)).toMatchObject({
      isError: true,
      structuredContent: { status: 410, code: "resource_cancelled" },
    });
  });

  it("uploads and downloads a blob's bytes as base64, a large one truncated", async () => {
    const { token } = await buyCredits(1);
    const { client } = await connectV1({ bearer: token });
    const created = (await callTool(client, "create_blobs", { ttl_seconds: 3600 })).structuredContent as Body;
    const auth = { id: created.id, management_token: created.management_token };
    const bytes = Uint8Array.from([0, 1, 2, 250, 255, 10, 13]);
    const up = await callTool(client, "blobs_upload", {
      ...auth,
      content_base64: btoa(String.fromCharCode(...bytes)),
      content_type: "application/x-test",
    });
    expect(up.structuredContent).toMatchObject({ size: 7, content_type: "application/x-test" });
    const down = await callTool(client, "blobs_download", auth);
    expect(down.structuredContent).toEqual({
      content_type: "application/x-test",
      size: 7,
      content_base64: btoa(String.fromCharCode(...bytes)),
      truncated: false,
    });
    const big = new Uint8Array(1024 * 1024 + 10).fill(7);
    const put = await SELF.fetch(`${ORIGIN}/v1/blobs/${created.id}/content`, {
      method: "PUT",
      body: big,
      headers: {
        authorization: `Bearer ${created.management_token}`,
        "x-credit-token": token,
        "content-type": "application/octet-stream",
      },
    });
    expect(put.status).toBe(200);
    expect((await callTool(client, "blobs_download", auth)).structuredContent).toMatchObject({
      size: big.length,
      truncated: true,
    });
    expect(await callTool(client, "blobs_upload", { ...auth, content_base64: "***" })).toMatchObject({
      isError: true,
      structuredContent: { status: 422, errors: [{ path: "content_base64" }] },
    });
  });

  it("refuses bad locators and tokens as tool errors", async () => {
    const { client, record } = await counterViaMcp();
    expect(
      (await callTool(client, "get_resource", { id: "..", management_token: record.management_token }))
        .structuredContent,
    ).toMatchObject({ status: 422, errors: [{ path: "id" }] });
    expect((await callTool(client, "get_resource", { id: record.id })).structuredContent).toMatchObject({
      status: 422,
      errors: [{ path: "management_token" }],
    });
    expect(
      (await callTool(client, "get_resource", { id: record.id, management_token: "zvm_nope" })).structuredContent,
    ).toMatchObject({ status: 401, code: "unauthorized" });
    const unpaid = await (
      await connectV1()
    ).client.callTool({
      name: "counters_increment",
      arguments: { id: record.id, management_token: record.management_token },
    });
    expect(unpaid).toMatchObject({
      isError: true,
      structuredContent: { x402Version: 2, accepts: [{ amount: "100" }] },
    });
  });

  it("calls request_feature for free", async () => {
    const { client } = await connectV1();
    const sent = await callTool(client, "request_feature", {
      title: "Vaults with TTL per key",
      contact: "agent@example.com",
    });
    expect(sent.structuredContent).toMatchObject({ status: "received" });
  });
});
