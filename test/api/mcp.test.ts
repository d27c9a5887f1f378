/**
 * The MCP tool endpoint (API.md §13), driven by the official MCP client
 * (@modelcontextprotocol/sdk, streamable HTTP) over SELF.fetch, and by raw
 * JSON-RPC for the envelope cases a well-behaved client never sends.
 */
import { SELF } from "cloudflare:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { generatePrivateKey } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { KINDS } from "../../src/resources/registry";
import { ORIGIN, balanceOf, buyCredits, call, json, signPayment } from "../harness";

type Body = Record<string, any>;

async function connect(bearer?: string, toolsets?: string) {
  const transport = new StreamableHTTPClientTransport(new URL(`${ORIGIN}/mcp${toolsets ? `?toolsets=${toolsets}` : ""}`), {
    fetch: (url, init) => SELF.fetch(url, init),
    requestInit: bearer ? { headers: { Authorization: `Bearer ${bearer}` } } : undefined,
  });
  const client = new Client({ name: "zeitvault-tests", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

async function callTool(client: Client, name: string, args: Body = {}, meta?: Body) {
  const result = await client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) });
  return result as { isError?: boolean; structuredContent?: Body; content: { type: string; text: string }[]; _meta?: Body };
}

async function rpc(body: unknown, init: RequestInit = {}): Promise<Response> {
  return SELF.fetch(`${ORIGIN}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: typeof body === "string" ? body : JSON.stringify(body),
    ...init,
  });
}

/** A paid counter created through MCP with a credit bearer. */
async function counterViaMcp(initial = 5) {
  const { token } = await buyCredits(1);
  const { client } = await connect(token);
  const created = await callTool(client, "create_counters", { initial, ttl_seconds: 3600 });
  expect(created.isError, created.content[0]?.text).toBeFalsy();
  return { client, token, record: created.structuredContent as Body };
}

describe("MCP client over streamable HTTP", () => {
  it("initializes with protocol 2024-11-05 and static tools", async () => {
    const { client, transport } = await connect();
    expect(transport.protocolVersion).toBe("2024-11-05");
    expect(client.getServerVersion()).toEqual({ name: "zeitvault", version: "1.0.0" });
    expect(client.getServerCapabilities()).toEqual({ tools: { listChanged: false } });
    await client.ping();
    await client.close();
  });

  it("lists a small generic surface by default that fits every client, without a credential", async () => {
    const { client } = await connect();
    const listed = await client.listTools();
    // VS Code refuses more than 128 tools and Cursor shows its model the first 40: the default stays well inside both.
    const tools = listed.tools as Body[];
    expect(tools.length).toBeLessThanOrEqual(40);
    const onTheWire = await (await rpc({ jsonrpc: "2.0", id: 1, method: "tools/list" })).text();
    expect(new TextEncoder().encode(JSON.stringify(JSON.parse(onTheWire).result)).length).toBeLessThanOrEqual(32 * 1024);
    expect(JSON.parse(onTheWire).result.tools).toEqual(JSON.parse(JSON.stringify(listed.tools)));
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining([
      "list_prices", "request_feature", "list_kinds", "describe_kind", "create_resource", "call_operation",
      "get_resource", "extend_resource", "export_resource", "cancel_resource", "get_balance", "buy_credits",
    ]));
    expect(names.filter((n) => n.startsWith("create_") && n !== "create_resource" && n !== "create_subtoken")).toEqual([]);

    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get("describe_kind")!.inputSchema.properties.kind.enum).toEqual(KINDS.map((k) => k.kind));
    expect(byName.get("call_operation")!.inputSchema.required).toEqual(expect.arrayContaining(["kind", "id", "management_token", "operation"]));
    expect(byName.get("extend_resource")!.inputSchema.required).toEqual(expect.arrayContaining(["id", "management_token", "ttl_seconds"]));
    expect(byName.get("get_resource")!.description).toMatch(/free/i);
    expect(byName.get("request_feature")!.inputSchema.properties).toHaveProperty("title");
  });

  it("adds the typed tools of chosen toolsets: families, kinds or all", async () => {
    const list = async (toolsets: string) => (await (await connect(undefined, toolsets)).client.listTools()).tools as Body[];
    const all = await list("all");
    const names = all.map((t) => t.name);
    for (const kind of KINDS) {
      const slug = kind.kind.replace(/-/g, "_");
      expect(names).toContain(`create_${slug}`);
      for (const op of kind.ops) expect(names).toContain(`${slug}_${op.name}`);
    }
    const byName = new Map(all.map((t) => [t.name, t]));
    const create = byName.get("create_counters")!;
    expect(Object.keys(create.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(["initial", "min", "max", "ttl_seconds", "label", "notify_url"]));
    expect(create.description).toContain("$0.001 per started day");
    const increment = byName.get("counters_increment")!;
    expect(increment.inputSchema.required).toEqual(expect.arrayContaining(["id", "management_token"]));
    expect(increment.inputSchema.properties).toMatchObject({ by: { type: "integer", minimum: 1, default: 1 }, id: { type: "string" } });
    expect(increment.description).toContain("$0.0001 per call");
    // A cross-field rule of the route's schema travels with the tool.
    expect(byName.get("create_wakeups")!.inputSchema.oneOf).toEqual([{ required: ["at"] }, { required: ["delay_seconds"] }]);

    const some = (await list("memory,wakeups")).map((t) => t.name);
    expect(some).toEqual(expect.arrayContaining(["create_wakeups", "wakeups_fire", "create_vaults", "queues_lease", "create_counters"]));
    expect(some).not.toContain("create_schedules");
    expect(some).toContain("describe_kind");
    // A typed tool of a toolset runs its route, as any tool does.
    const { token } = await buyCredits(1);
    const typed = await connect(token, "wakeups");
    const created = await callTool(typed.client, "create_wakeups", { url: "https://example.com/hooks/x", delay_seconds: 600 });
    expect(created.isError, created.content[0]?.text).toBeFalsy();
    const both = await callTool(typed.client, "create_wakeups", { url: "https://example.com/hooks/x", delay_seconds: 600, at: "2030-01-01T00:00:00Z" });
    expect(both).toMatchObject({ isError: true, structuredContent: { status: 422, errors: [{ path: "at" }] } });

    const unknown = await SELF.fetch(`${ORIGIN}/mcp?toolsets=memory,nonsense`, {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({ code: "invalid_request", errors: [{ path: "query.toolsets" }] });
  });

  it("reaches a kind through describe_kind, create_resource and call_operation alone, paid by the bearer", async () => {
    const { token } = await buyCredits(1);
    const { client } = await connect(token);
    const kinds = (await callTool(client, "list_kinds")).structuredContent!.kinds as Body[];
    expect(kinds.map((k) => k.kind)).toEqual(KINDS.map((k) => k.kind));
    const described = (await callTool(client, "describe_kind", { kind: "queues" })).structuredContent!;
    expect(described).toMatchObject({ kind: "queues", family: "memory", create: { example: expect.any(Object) } });
    const push = (described.operations as Body[]).find((o) => o.name === "push")!;
    expect(push).toMatchObject({ method: "POST", price_usd: expect.any(Number), example: { input: expect.any(Object) } });
    expect(push.input_schema.properties).not.toHaveProperty("management_token");

    const created = await callTool(client, "create_resource", { kind: "queues", input: { ...described.create.example, ttl_seconds: 3600 } });
    expect(created.isError, created.content[0]?.text).toBeFalsy();
    const { id, management_token } = created.structuredContent!;
    const pushed = await callTool(client, "call_operation", { kind: "queues", id, management_token, operation: "push", input: push.example.input });
    expect(pushed.isError, pushed.content[0]?.text).toBeFalsy();
    const leased = await callTool(client, "call_operation", { kind: "queues", id, management_token, operation: "lease", input: { max_messages: 1 } });
    expect(leased.structuredContent!.items).toHaveLength(1);
    const stats = await callTool(client, "call_operation", { kind: "queues", id, management_token, operation: "stats" });
    expect(stats.isError, stats.content[0]?.text).toBeFalsy();

    // Its own refusals, and the route's, are tool errors with the problem.
    const wrongOp = await callTool(client, "call_operation", { kind: "queues", id, management_token, operation: "increment" });
    expect(wrongOp).toMatchObject({ isError: true, structuredContent: { status: 422, errors: [{ path: "operation" }] } });
    const badInput = await callTool(client, "call_operation", { kind: "queues", id, management_token, operation: "lease", input: { max_messages: 0 } });
    expect(badInput).toMatchObject({ isError: true, structuredContent: { status: 422 } });
    const badKind = await callTool(client, "describe_kind", { kind: "nope" });
    expect(badKind).toMatchObject({ isError: true, structuredContent: { status: 422, errors: [{ path: "kind" }] } });
  });

  it("pays create_resource and call_operation with _meta x402/payment, and an idempotency_key makes a retry free", async () => {
    const { client } = await connect();
    const refused = await callTool(client, "create_resource", { kind: "counters", input: { ttl_seconds: 3600 } });
    expect(refused.isError).toBe(true);
    const terms = refused.structuredContent as Body;
    const key = generatePrivateKey();
    const pay = async (amount: string) => JSON.parse(atob((await signPayment({ key, priceMicro: Number(amount), version: 2 })).header));
    const args = { kind: "counters", input: { ttl_seconds: 3600, initial: 4 }, idempotency_key: crypto.randomUUID() };
    const created = await callTool(client, "create_resource", args, { "x402/payment": await pay(terms.accepts[0].amount) });
    expect(created.isError, created.content[0]?.text).toBeFalsy();
    expect(created._meta?.["x402/payment-response"]).toMatchObject({ success: true });
    // A retry with the same key, paid by the same payer with a fresh authorization (a used one proves nothing), answers
    // the first create: no second resource, and the new authorization is left unused.
    const again = await callTool(client, "create_resource", args, { "x402/payment": await pay(terms.accepts[0].amount) });
    expect(again.isError, again.content[0]?.text).toBeFalsy();
    expect(again.structuredContent).toMatchObject({ id: created.structuredContent!.id });

    const { id, management_token } = created.structuredContent!;
    const inc = await callTool(client, "call_operation", { kind: "counters", id, management_token, operation: "increment", input: { by: 2 } }, { "x402/payment": await pay("100") });
    expect(inc.isError, inc.content[0]?.text).toBeFalsy();
    expect(inc.structuredContent).toMatchObject({ value: 6 });
  });

  it("calls list_prices for free", async () => {
    const { client } = await connect();
    const prices = await callTool(client, "list_prices");
    expect(prices.isError).toBeFalsy();
    expect(prices.structuredContent).toMatchObject({ currency: "USD" });
    expect(prices.structuredContent!.operations).toContainEqual(expect.objectContaining({ operation: "counters.increment", price_usd: 0.0001 }));
    expect(JSON.parse(prices.content[0]!.text)).toEqual(prices.structuredContent);
  });

  it("calls request_feature for free", async () => {
    const { client } = await connect();
    const sent = await callTool(client, "request_feature", { title: "Vaults with TTL per key", contact: "agent@example.com" });
    expect(sent.isError, sent.content[0]?.text).toBeFalsy();
    expect(sent.structuredContent).toMatchObject({ status: "received" });
  });

  it("creates a counter paid by the credit bearer", async () => {
    const { token, record } = await counterViaMcp();
    expect(record).toMatchObject({ kind: "counters", state: "active", usage: { value: 5 } });
    expect(record.management_token).toMatch(/^zvm_/);
    expect((await balanceOf(token)).spent_usd).toBeCloseTo(0.001, 6);
  });

  it("refuses an unpaid call with the x402 terms, then runs it paid with _meta x402/payment", async () => {
    const { client } = await connect();
    const refused = await callTool(client, "create_counters", { ttl_seconds: 3600 });
    expect(refused.isError).toBe(true);
    const terms = refused.structuredContent as Body;
    expect(terms).toMatchObject({ x402Version: 2, accepts: [{ scheme: "exact", amount: "1000", network: "eip155:84532" }] });
    expect(JSON.parse(refused.content[0]!.text)).toEqual(terms);

    const { header, payer } = await signPayment({ priceMicro: Number(terms.accepts[0].amount), version: 2 });
    const payload = JSON.parse(atob(header));
    const paid = await callTool(client, "create_counters", { ttl_seconds: 3600, initial: 3 }, { "x402/payment": payload });
    expect(paid.isError, paid.content[0]?.text).toBeFalsy();
    expect(paid.structuredContent).toMatchObject({ kind: "counters", usage: { value: 3 } });
    expect(paid._meta?.["x402/payment-response"]).toMatchObject({ success: true, payer, network: "eip155:84532" });

    // The same authorization again is a replay: refused as a tool error, nothing created twice.
    const replay = await callTool(client, "create_counters", { ttl_seconds: 3600, initial: 3 }, { "x402/payment": payload });
    expect(replay.isError).toBe(true);
    expect(replay.structuredContent).toMatchObject({ status: 409, code: "payment_replayed" });
  });

  it("accepts an x402 v1 payload in _meta as well", async () => {
    const { client } = await connect();
    const { header, payer } = await signPayment({ priceMicro: 1000, version: 1 });
    const paid = await callTool(client, "create_counters", { ttl_seconds: 3600 }, { "x402/payment": JSON.parse(atob(header)) });
    expect(paid.isError, paid.content[0]?.text).toBeFalsy();
    expect(paid._meta?.["x402/payment-response"]).toMatchObject({ success: true, payer });
  });

  it("runs a data-plane tool with id and management_token, paid by the bearer", async () => {
    const { client, token, record } = await counterViaMcp(5);
    const spent = (await balanceOf(token)).spent_usd;
    const inc = await callTool(client, "counters_increment", { id: record.id, management_token: record.management_token, by: 2 });
    expect(inc.isError, inc.content[0]?.text).toBeFalsy();
    expect(inc.structuredContent).toMatchObject({ value: 7 });
    const read = await callTool(client, "counters_get", { id: record.id, management_token: record.management_token });
    expect(read.structuredContent).toMatchObject({ value: 7 });
    expect((await balanceOf(token)).spent_usd).toBeCloseTo(spent + 0.0002, 6);

    // REST validation, unchanged: a zero step is 422 with the field path.
    const bad = await callTool(client, "counters_increment", { id: record.id, management_token: record.management_token, by: 0 });
    expect(bad.isError).toBe(true);
    expect(bad.structuredContent).toMatchObject({ status: 422, code: "validation_failed", errors: [{ path: "by" }] });
  });

  it("uploads and downloads a blob's bytes as base64", async () => {
    const { token } = await buyCredits(1);
    const { client } = await connect(token);
    const created = (await callTool(client, "create_blobs", { ttl_seconds: 3600 })).structuredContent as Body;
    const auth = { id: created.id, management_token: created.management_token };
    const bytes = Uint8Array.from([0, 1, 2, 250, 255, 10, 13]);
    const up = await callTool(client, "blobs_upload", { ...auth, content_base64: btoa(String.fromCharCode(...bytes)), content_type: "application/x-test" });
    expect(up.isError, up.content[0]?.text).toBeFalsy();
    expect(up.structuredContent).toMatchObject({ size: 7, content_type: "application/x-test" });
    const down = await callTool(client, "blobs_download", auth);
    expect(down.structuredContent).toEqual({ content_type: "application/x-test", size: 7, content_base64: btoa(String.fromCharCode(...bytes)), truncated: false });
    // Over 1 MiB (uploaded over REST): the tool answers the first MiB, truncated and said so.
    const big = new Uint8Array(1024 * 1024 + 10).fill(7);
    const put = await SELF.fetch(`${ORIGIN}/v1/blobs/${created.id}/content`, {
      method: "PUT", body: big, headers: { authorization: `Bearer ${created.management_token}`, "x-credit-token": token, "content-type": "application/octet-stream" },
    });
    expect(put.status).toBe(200);
    const partial = (await callTool(client, "blobs_download", auth)).structuredContent as Body;
    expect(partial).toMatchObject({ size: big.length, truncated: true });
    expect(atob(partial.content_base64).length).toBe(1024 * 1024);
    const bad = await callTool(client, "blobs_upload", { ...auth, content_base64: "***" });
    expect(bad.isError).toBe(true);
    expect(bad.structuredContent).toMatchObject({ status: 422, errors: [{ path: "content_base64" }] });
  });

  it("pays with an OAuth access token as the bearer, for creates and data-plane calls", async () => {
    const { token } = await buyCredits(1);
    const form = new URLSearchParams({ grant_type: "client_credentials", client_secret: token, scope: "zeitvault.write" });
    const grant = await call("POST", "/oauth/token", { body: form.toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });
    const { access_token } = await json(grant);
    const { client } = await connect(access_token);
    const created = await callTool(client, "create_counters", { ttl_seconds: 3600 });
    expect(created.isError, created.content[0]?.text).toBeFalsy();
    const { id, management_token } = created.structuredContent as Body;
    const inc = await callTool(client, "counters_increment", { id, management_token });
    expect(inc.isError, inc.content[0]?.text).toBeFalsy();
    expect(inc.structuredContent).toMatchObject({ value: 1 });
    expect((await balanceOf(token)).spent_usd).toBeCloseTo(0.0011, 6);
  });

  it("manages a resource: status, extend, export, cancel", async () => {
    const { client, record } = await counterViaMcp(1);
    const mgmt = { id: record.id, management_token: record.management_token };
    expect((await callTool(client, "get_resource", mgmt)).structuredContent).toMatchObject({ id: record.id, state: "active" });
    const extended = await callTool(client, "extend_resource", { ...mgmt, ttl_seconds: 86400 });
    expect(Date.parse(extended.structuredContent!.expires_at)).toBeGreaterThan(Date.parse(record.expires_at));
    expect((await callTool(client, "export_resource", mgmt)).structuredContent).toMatchObject({ data: { value: 1 } });
    expect((await callTool(client, "cancel_resource", mgmt)).structuredContent).toMatchObject({ state: "cancelled" });
    const gone = await callTool(client, "get_resource", mgmt);
    expect(gone).toMatchObject({ isError: true, structuredContent: { status: 410, code: "resource_cancelled" } });
  });

  it("refuses bad locators and tokens as tool errors, unknown tools as JSON-RPC errors", async () => {
    const { client, record } = await counterViaMcp();
    const traversal = await callTool(client, "get_resource", { id: "..", management_token: record.management_token });
    expect(traversal.structuredContent).toMatchObject({ status: 422, errors: [{ path: "id" }] });
    const missing = await callTool(client, "get_resource", { id: record.id });
    expect(missing.structuredContent).toMatchObject({ status: 422, errors: [{ path: "management_token" }] });
    const wrong = await callTool(client, "get_resource", { id: record.id, management_token: "zvm_nope" });
    expect(wrong.structuredContent).toMatchObject({ status: 401, code: "unauthorized" });
    const unpaid = await (await connect()).client.callTool({ name: "counters_increment", arguments: { id: record.id, management_token: record.management_token } });
    expect(unpaid).toMatchObject({ isError: true, structuredContent: { x402Version: 2, accepts: [{ amount: "100" }] } });

    const unknown = client.callTool({ name: "no_such_tool", arguments: {} });
    await expect(unknown).rejects.toBeInstanceOf(McpError);
    await expect(unknown).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
  });
});

describe("raw JSON-RPC on /mcp", () => {
  const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } } };

  it("answers initialize with 2024-11-05 whatever the client asks", async () => {
    const res = await rpc(init);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(await res.json()).toMatchObject({
      jsonrpc: "2.0", id: 1,
      result: { protocolVersion: "2024-11-05", serverInfo: { name: "zeitvault", version: "1.0.0" }, capabilities: { tools: { listChanged: false } } },
    });
  });

  it("answers a batch with an array, skipping notifications", async () => {
    const res = await rpc([
      init,
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: "two", method: "tools/list" },
      { jsonrpc: "2.0", id: 3, method: "ping" },
      { jsonrpc: "2.0", id: 4, method: "nope" },
      42,
    ]);
    expect(res.status).toBe(200);
    const out = (await res.json()) as Body[];
    expect(out.map((m) => m.id)).toEqual([1, "two", 3, 4, null]);
    expect(out[1]!.result.tools.length).toBeGreaterThan(8);
    expect(out[2]!.result).toEqual({});
    expect(out[3]!.error.code).toBe(-32601);
    expect(out[4]!.error.code).toBe(-32600);
  });

  it("answers notifications with 202 and no body", async () => {
    const one = await rpc({ jsonrpc: "2.0", method: "notifications/initialized" });
    expect(one.status).toBe(202);
    expect(await one.text()).toBe("");
    const batch = await rpc([{ jsonrpc: "2.0", method: "notifications/initialized" }, { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } }]);
    expect(batch.status).toBe(202);
    expect(await batch.text()).toBe("");
  });

  it("answers GET and DELETE with 405 and Allow: POST", async () => {
    for (const method of ["GET", "DELETE"]) {
      const res = await SELF.fetch(`${ORIGIN}/mcp`, { method, headers: { accept: "text/event-stream" } });
      expect(res.status, method).toBe(405);
      expect(res.headers.get("allow")).toBe("POST");
      expect(await res.json()).toMatchObject({ code: "method_not_allowed" });
    }
  });

  it("maps envelope errors to JSON-RPC codes", async () => {
    const parse = await rpc("{not json");
    expect(parse.status).toBe(200);
    expect(await parse.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
    expect(await (await rpc({ jsonrpc: "2.0", id: 7, method: "resources/list" })).json()).toMatchObject({ id: 7, error: { code: -32601 } });
    expect(await (await rpc({ jsonrpc: "1.0", id: 8, method: "ping" })).json()).toMatchObject({ id: 8, error: { code: -32600 } });
    expect(await (await rpc({ jsonrpc: "2.0", id: null, method: "ping" })).json()).toMatchObject({ id: null, error: { code: -32600 } });
    expect(await (await rpc([])).json()).toMatchObject({ id: null, error: { code: -32600 } });
    expect(await (await rpc({ jsonrpc: "2.0", id: 9, method: "tools/call", params: { arguments: {} } })).json()).toMatchObject({ id: 9, error: { code: -32602 } });
    const badMeta = { jsonrpc: "2.0", id: 10, method: "tools/call", params: { name: "list_prices", _meta: { "x402/payment": "eyJ4NDAy" } } };
    expect(await (await rpc(badMeta)).json()).toMatchObject({ id: 10, error: { code: -32602 } });
  });

  it("forwards an x402 header on the MCP request to the tool", async () => {
    const { header, name } = await signPayment({ priceMicro: 1000, version: 2 });
    const res = await rpc({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "create_counters", arguments: { ttl_seconds: 60 } } }, {
      headers: { "content-type": "application/json", [name]: header },
    });
    const body = (await res.json()) as Body;
    expect(body.result.isError, JSON.stringify(body)).toBeUndefined();
    expect(body.result.structuredContent.management_token).toMatch(/^zvm_/);
    expect(body.result._meta["x402/payment-response"]).toMatchObject({ success: true });
  });
});
