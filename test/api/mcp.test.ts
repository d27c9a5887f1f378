/**
 * The MCP endpoint with every client in use, each a real client over HTTP against the worker:
 * the 1.x SDK client at 2025-11-25 and forced down to 2024-11-05, the v2 client at 2026-07-28
 * (stateless), and a raw 2025-03-26 client that sends batches. For each: list the tools, call a
 * free tool, pay a paid one every way (credit token, x402 in `_meta`, OAuth access token), and
 * get a clear error for an unknown tool and for bad arguments.
 */
import { generatePrivateKey } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { KINDS } from "../../src/resources/registry";
import { balanceOf, buyCredits, call, json, signPayment } from "../harness";
import {
  post,
  wireHeaders,
  type Body,
  type RpcAnswer,
  type ToolAnswer,
  type ToolPage,
  type X402Terms,
} from "./mcp-clients";
import { data, DRIVERS, structured } from "./mcp-drivers";

async function accessToken(creditToken: string): Promise<string> {
  const form = new URLSearchParams({
    grant_type: "client_credentials",
    client_secret: creditToken,
    scope: "zeitvault.write",
  });
  const grant = await call("POST", "/oauth/token", {
    body: form.toString(),
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
  return (await json<{ access_token: string }>(grant)).access_token;
}

describe.each(DRIVERS)("$name", (driver) => {
  const { revision } = driver;

  it("lists the default tools, each with the fields its revision has", async () => {
    const session = await driver.connect();
    const tools = await session.list();
    expect(tools.length).toBeLessThanOrEqual(40);
    const byName = new Map(tools.map((t) => [t.name as string, t]));
    expect([...byName.keys()]).toEqual(
      expect.arrayContaining([
        "list_kinds",
        "describe_kind",
        "create_resource",
        "call_operation",
        "get_resource",
        "list_prices",
        "buy_credits",
      ]),
    );
    expect(byName.get("describe_kind")!.inputSchema.properties!.kind!.enum).toEqual(KINDS.map((k) => k.kind));
    const get = byName.get("get_resource")!;
    if (revision === "2024-11-05") expect(Object.keys(get).sort()).toEqual(["description", "inputSchema", "name"]);
    else
      expect(get.annotations).toMatchObject({
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      });
    if (revision === "2025-03-26") expect(get.annotations!.title).toBe("Get resource");
    if (structured(revision)) {
      expect(get).toMatchObject({
        title: "Get resource",
        outputSchema: { type: "object", properties: { id: expect.any(Object) } },
      });
      expect(byName.get("cancel_resource")!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    } else {
      expect(get).not.toHaveProperty("outputSchema");
      expect(get).not.toHaveProperty("title");
    }
    if (revision >= "2025-11-25")
      expect(get.icons).toEqual([
        { src: "https://zeitvault.test/mcp/icon.svg", mimeType: "image/svg+xml", sizes: ["any"] },
      ]);
    else expect(get).not.toHaveProperty("icons");
    await session.close();
  });

  it("lists every kind's typed tools with ?toolsets=all, page by page", async () => {
    const session = await driver.connect(undefined, "all");
    const names = (await session.list()).map((t) => t.name);
    expect(names.length).toBeGreaterThan(100);
    expect(new Set(names).size).toBe(names.length);
    // 2025-11-25's tool-name rule, for every tool: 1 to 128 of A-Z a-z 0-9 _ - .
    for (const name of names) expect(name).toMatch(/^[A-Za-z0-9_.-]{1,128}$/);
    for (const kind of KINDS) expect(names).toContain(`create_${kind.kind.replace(/-/g, "_")}`);
    await session.close();
  });

  it("calls a free tool", async () => {
    const session = await driver.connect();
    const prices = await session.call("list_prices");
    expect(prices.isError).toBeFalsy();
    expect(data(prices)).toMatchObject({ currency: "USD" });
    expect(JSON.parse(prices.content[0]!.text)).toMatchObject({ currency: "USD" });
    if (structured(revision)) expect(prices.structuredContent).toEqual(JSON.parse(prices.content[0]!.text));
    else expect(prices).not.toHaveProperty("structuredContent");
    await session.close();
  });

  it("runs a paid call paid by the credit token on the connection", async () => {
    const { token } = await buyCredits(1);
    const session = await driver.connect(token);
    const created = await session.call("create_resource", {
      kind: "counters",
      input: { ttl_seconds: 3600, initial: 2 },
    });
    expect(created.isError, created.content[0]?.text).toBeFalsy();
    const { id, management_token } = data(created);
    const inc = await session.call("call_operation", {
      kind: "counters",
      id,
      management_token,
      operation: "increment",
      input: { by: 3 },
    });
    expect(data(inc)).toMatchObject({ value: 5 });
    expect((await balanceOf(token)).spent_usd).toBeCloseTo(0.0011, 6);
    await session.close();
  });

  it("refuses an unpaid call with the x402 terms, then runs it paid with x402 in _meta", async () => {
    const session = await driver.connect();
    const refused = await session.call("create_counters", { ttl_seconds: 3600 });
    expect(refused.isError).toBe(true);
    // x402's MCP transport: the terms in the text's x402/error wrapper always, and as structuredContent where the
    // revision has it.
    const wrapped = JSON.parse(refused.content[0]!.text) as Body;
    expect(wrapped["x402/error"]).toMatchObject({ code: 402, message: expect.any(String), data: { x402Version: 2 } });
    const terms = data(refused as ToolAnswer<X402Terms>);
    expect(terms).toMatchObject({
      x402Version: 2,
      accepts: [{ scheme: "exact", amount: "1000", network: "eip155:84532" }],
    });
    expect(refused.structuredContent !== undefined).toBe(structured(revision));

    const { header, payer } = await signPayment({
      key: generatePrivateKey(),
      priceMicro: Number(terms.accepts[0]!.amount),
      version: 2,
    });
    const paid = await session.call(
      "create_counters",
      { ttl_seconds: 3600, initial: 3 },
      { "x402/payment": JSON.parse(atob(header)) },
    );
    expect(paid.isError, paid.content[0]?.text).toBeFalsy();
    expect(data(paid)).toMatchObject({ kind: "counters", usage: { value: 3 } });
    expect(paid._meta?.["x402/payment-response"]).toMatchObject({ success: true, payer });
    await session.close();
  });

  it("runs paid calls paid by an OAuth access token on the connection", async () => {
    const { token } = await buyCredits(1);
    const session = await driver.connect(await accessToken(token));
    const created = await session.call("create_counters", { ttl_seconds: 3600 });
    expect(created.isError, created.content[0]?.text).toBeFalsy();
    const { id, management_token } = data(created);
    const inc = await session.call("counters_increment", { id, management_token });
    expect(data(inc)).toMatchObject({ value: 1 });
    expect((await balanceOf(token)).spent_usd).toBeCloseTo(0.0011, 6);
    await session.close();
  });

  it("answers an unknown tool with a JSON-RPC error, bad arguments with a tool error, charging nothing", async () => {
    const { token } = await buyCredits(1);
    const session = await driver.connect(token);
    const unknown = await session.call("no_such_tool", {});
    expect(unknown.rpcError).toMatchObject({ code: -32602, message: expect.stringContaining("no_such_tool") });
    const bad = await session.call("create_counters", { ttl_seconds: -5, nonsense: true });
    expect(bad.isError).toBe(true);
    expect(data(bad)).toMatchObject({ status: 422, code: "validation_failed", errors: expect.any(Array) });
    const wrongKind = await session.call("describe_kind", { kind: "nope" });
    expect(data(wrongKind)).toMatchObject({ status: 422, errors: [{ path: "kind" }] });
    expect((await balanceOf(token)).spent_usd).toBe(0);
    await session.close();
  });
});

describe("the raw 2025-03-26 client's batches", () => {
  it("answers requests in order, skips notifications, and refuses an initialize inside a batch", async () => {
    const res = await post(
      [
        {
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
        },
        { jsonrpc: "2.0", method: "notifications/initialized" },
        { jsonrpc: "2.0", id: "two", method: "tools/list" },
        { jsonrpc: "2.0", id: 3, method: "ping" },
        { jsonrpc: "2.0", id: 4, method: "nope" },
        42,
      ],
      wireHeaders("2025-03-26"),
    );
    expect(res.status).toBe(200);
    const out = (await res.json()) as RpcAnswer<ToolPage>[];
    expect(out.map((m) => m.id)).toEqual([1, "two", 3, 4, null]);
    expect(out[0]!.error).toMatchObject({ code: -32600, message: expect.stringContaining("batch") });
    expect(out[1]!.result!.tools.length).toBeGreaterThan(8);
    expect(out[2]!.result).toEqual({});
    expect(out[3]!.error!.code).toBe(-32601);
    expect(out[4]!.error!.code).toBe(-32600);
    const quiet = await post([
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } },
    ]);
    expect(quiet.status).toBe(202);
    expect(await quiet.text()).toBe("");
  });
});
