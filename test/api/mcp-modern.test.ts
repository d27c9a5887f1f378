/**
 * 2026-07-28 on the wire, with raw requests: the per-request `_meta` (-32602 and HTTP 400 without
 * it), the standard headers (-32020 and 400 when missing or not the body's), unsupported versions
 * (-32022 naming the supported ones), methods the revision removed (-32601 and 404), and results
 * with resultType, the server's identity and cache hints. Nothing depends on an earlier request.
 */
import { describe, expect, it } from "vitest";
import { modern, MODERN_META, post, wireHeaders, type Body, type RpcAnswer, type ToolAnswer } from "./mcp-clients";

const discover = (params: Body, headers: Record<string, string> = {}, id = 101) =>
  post(
    { jsonrpc: "2.0", id, method: "server/discover", params },
    wireHeaders("2026-07-28", { "mcp-method": "server/discover", ...headers }),
  );

describe("2026-07-28 requests", () => {
  it("answer server/discover with every version served, the capabilities, and the server in _meta", async () => {
    const res = await modern(1, "server/discover");
    expect(res.status).toBe(200);
    const { result } = (await res.json()) as RpcAnswer<{ capabilities: Body }>;
    expect(result).toMatchObject({
      resultType: "complete",
      supportedVersions: ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
      capabilities: {
        tools: { listChanged: false },
        resources: { subscribe: false, listChanged: false },
        prompts: {},
        completions: {},
      },
      instructions: expect.stringContaining("list_kinds"),
      ttlMs: expect.any(Number),
      cacheScope: "public",
      _meta: {
        "io.modelcontextprotocol/serverInfo": {
          name: "zeitvault",
          version: "1.0.0",
          title: "Zeitvault",
          icons: [expect.objectContaining({ mimeType: "image/svg+xml" })],
        },
      },
    });
    expect(result!.capabilities).not.toHaveProperty("logging");
    // clientInfo is a SHOULD: a request without it is served.
    const { "io.modelcontextprotocol/clientInfo": _info, ...withoutInfo } = MODERN_META;
    expect((await discover({ _meta: withoutInfo })).status).toBe(200);
  });

  it("refuse a request without its _meta fields with -32602 and HTTP 400, echoing the id", async () => {
    const cases: Body[] = [
      {},
      { _meta: { "io.modelcontextprotocol/clientCapabilities": {} } },
      { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } },
      { _meta: { ...MODERN_META, "io.modelcontextprotocol/clientCapabilities": "none" } },
      { _meta: { ...MODERN_META, "io.modelcontextprotocol/logLevel": "loud" } },
    ];
    for (const [i, params] of cases.entries()) {
      const res = await discover(params, {}, 200 + i);
      expect(res.status, JSON.stringify(params)).toBe(400);
      expect(await res.json()).toMatchObject({ id: 200 + i, error: { code: -32602 } });
    }
  });

  it("check the protocol version: the header must be there and match _meta, and name a version served", async () => {
    const mismatch = await discover(
      { _meta: { ...MODERN_META, "io.modelcontextprotocol/protocolVersion": "v999.0.0" } },
      {},
      302,
    );
    expect(mismatch.status).toBe(400);
    expect(await mismatch.json()).toMatchObject({ id: 302, error: { code: -32020 } });
    const unsupported = await post(
      {
        jsonrpc: "2.0",
        id: 301,
        method: "server/discover",
        params: { _meta: { ...MODERN_META, "io.modelcontextprotocol/protocolVersion": "v999.0.0" } },
      },
      wireHeaders("v999.0.0", { "mcp-method": "server/discover" }),
    );
    expect(unsupported.status).toBe(400);
    expect(await unsupported.json()).toMatchObject({
      id: 301,
      error: { code: -32022, data: { requested: "v999.0.0", supported: expect.arrayContaining(["2026-07-28"]) } },
    });
    const headerless = await post(
      { jsonrpc: "2.0", id: 303, method: "server/discover", params: { _meta: MODERN_META } },
      wireHeaders(undefined, { "mcp-method": "server/discover" }),
    );
    expect(headerless.status).toBe(400);
    expect(await headerless.json()).toMatchObject({
      id: 303,
      error: { code: -32020, message: expect.stringContaining("MCP-Protocol-Version") },
    });
  });

  it("check Mcp-Method and Mcp-Name against the body (base64-encoded names decoded first)", async () => {
    const call = (headers: Record<string, string>, name = "list_prices") =>
      post(
        { jsonrpc: "2.0", id: 5, method: "tools/call", params: { name, arguments: {}, _meta: MODERN_META } },
        wireHeaders("2026-07-28", headers),
      );
    const wrong: Record<string, string>[] = [
      {},
      { "mcp-method": "tools/list", "mcp-name": "list_prices" },
      { "mcp-method": "tools/call" },
      { "mcp-method": "tools/call", "mcp-name": "list_kinds" },
      { "mcp-method": "tools/call", "mcp-name": "=?base64?***?=" },
    ];
    for (const headers of wrong) {
      const res = await call(headers);
      expect(res.status, JSON.stringify(headers)).toBe(400);
      expect(await res.json()).toMatchObject({ id: 5, error: { code: -32020 } });
    }
    const encoded = await call({ "mcp-method": "tools/call", "mcp-name": `=?base64?${btoa("list_prices")}?=` });
    expect(encoded.status).toBe(200);
    expect(((await encoded.json()) as Body).result).toMatchObject({
      resultType: "complete",
      structuredContent: { currency: "USD" },
    });
    const read = await modern(6, "resources/read", { uri: "zeitvault://prices" }, { "mcp-name": "zeitvault://other" });
    expect(read.status).toBe(400);
  });

  it("answer the methods 2026-07-28 removed, and unknown ones, with -32601 and HTTP 404", async () => {
    for (const method of [
      "initialize",
      "ping",
      "logging/setLevel",
      "resources/subscribe",
      "resources/unsubscribe",
      "unknown/method",
    ]) {
      const res = await modern(500, method);
      expect(res.status, method).toBe(404);
      expect(await res.json()).toMatchObject({ id: 500, error: { code: -32601 } });
    }
  });

  it("mark every result complete, with the server's identity, and list-like ones with cache hints", async () => {
    const list = ((await (await modern(1, "tools/list")).json()) as Body).result;
    expect(list).toMatchObject({
      resultType: "complete",
      ttlMs: 3_600_000,
      cacheScope: "public",
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "zeitvault" } },
    });
    const called = ((await (await modern(2, "tools/call", { name: "list_kinds", arguments: {} })).json()) as Body)
      .result;
    expect(called).toMatchObject({
      resultType: "complete",
      structuredContent: { kinds: expect.any(Array) },
      _meta: { "io.modelcontextprotocol/serverInfo": expect.any(Object) },
    });
    expect(called).not.toHaveProperty("ttlMs");
    const completed = (
      (await (
        await modern(3, "completion/complete", {
          ref: { type: "ref/prompt", name: "use_kind" },
          argument: { name: "kind", value: "coun" },
        })
      ).json()) as Body
    ).result;
    expect(completed).toMatchObject({ resultType: "complete", completion: { values: ["counters"] } });
    // Questions this server never asks: answers to them are ignored, not refused.
    const retried = await modern(4, "tools/call", {
      name: "list_prices",
      arguments: {},
      inputResponses: { x: { action: "accept" } },
      requestState: "opaque",
    });
    expect(((await retried.json()) as RpcAnswer<ToolAnswer>).result!.isError).toBeUndefined();
    // A notification has nothing to answer.
    expect(
      (
        await post(
          { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } },
          wireHeaders("2026-07-28"),
        )
      ).status,
    ).toBe(202);
  });

  it("answer an unpaid call with a complete tool error carrying the x402 terms, not input_required", async () => {
    const res = await modern(7, "tools/call", { name: "create_resource", arguments: { kind: "counters", input: {} } });
    const { result } = (await res.json()) as RpcAnswer<ToolAnswer>;
    expect(result).toMatchObject({
      resultType: "complete",
      isError: true,
      structuredContent: { x402Version: 2, accepts: [{ amount: expect.any(String) }] },
    });
    expect(JSON.parse(result!.content[0]!.text)["x402/error"]).toMatchObject({ code: 402, data: { x402Version: 2 } });
  });
});
