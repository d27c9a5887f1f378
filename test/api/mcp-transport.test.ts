/**
 * The HTTP rules of /mcp, with raw requests (what no well-behaved client sends): Origin (403),
 * Content-Type (415), parse errors (400), Accept (406 by each revision's rule), MCP-Protocol-Version
 * (400 when unsupported; none means 2025-03-26), batches only where the revision has them, GET and
 * DELETE (405), version negotiation in initialize, and notifications (202, nothing to write).
 */
import { createExecutionContext, env, SELF, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Env } from "../../src/env";
import worker from "../../src/index";
import { ORIGIN } from "../harness";
import { post, wireHeaders, type Body, type RpcAnswer } from "./mcp-clients";

const ping = { jsonrpc: "2.0", id: 7, method: "ping" };
const init = (protocolVersion: unknown) => ({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion, capabilities: {}, clientInfo: { name: "raw", version: "0" } },
});

/** The worker with other settings, for the Origin rules that depend on them. */
async function withEnv(
  vars: Partial<Env>,
  url: string,
  headers: Record<string, string>,
  body: unknown = ping,
): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(
    new Request(url, {
      method: "POST",
      headers: { ...wireHeaders("2025-11-25"), ...headers },
      body: JSON.stringify(body),
    }),
    { ...env, ...vars } as Env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return res;
}

function bodiless(headers: Record<string, string>, method = "GET"): Promise<Response> {
  return SELF.fetch(`${ORIGIN}/mcp`, { method, headers: { accept: "text/event-stream", ...headers } });
}

describe("Origin (DNS rebinding)", () => {
  it("serves requests without an Origin and from the service's own, and refuses any other with 403", async () => {
    expect((await post(ping, wireHeaders("2025-11-25"))).status).toBe(200);
    expect((await post(ping, wireHeaders("2025-11-25", { origin: ORIGIN }))).status).toBe(200);
    for (const origin of [
      "http://evil.example.com",
      "null",
      "https://zeitvault.test.evil.example",
      "http://zeitvault.test",
    ]) {
      const res = await post(init("2025-11-25"), wireHeaders(undefined, { origin }));
      expect(res.status, origin).toBe(403);
      expect(await res.json()).toMatchObject({
        jsonrpc: "2.0",
        id: null,
        error: { code: -32600, message: expect.stringContaining("Origin") },
      });
    }
  });

  it("takes MCP_ALLOWED_ORIGINS and BASE_URL; under wrangler dev the request's origin only on loopback", async () => {
    const app = "https://app.example.com";
    expect(
      (await withEnv({ MCP_ALLOWED_ORIGINS: ` ${app}/ , not a url` }, `${ORIGIN}/mcp`, { origin: app })).status,
    ).toBe(200);
    expect(
      (await withEnv({ MCP_ALLOWED_ORIGINS: app }, `${ORIGIN}/mcp`, { origin: "https://other.example.com" })).status,
    ).toBe(403);
    expect(
      (await withEnv({ BASE_URL: "https://api.example.com" }, `${ORIGIN}/mcp`, { origin: "https://api.example.com" }))
        .status,
    ).toBe(200);
    expect((await withEnv({ BASE_URL: "https://api.example.com" }, `${ORIGIN}/mcp`, { origin: ORIGIN })).status).toBe(
      403,
    );
    const dev = { ENVIRONMENT: "development" };
    expect((await withEnv(dev, "http://127.0.0.1:8787/mcp", { origin: "http://127.0.0.1:8787" })).status).toBe(200);
    expect((await withEnv(dev, "http://localhost:8787/mcp", { origin: "http://localhost:8787" })).status).toBe(200);
    // A rebound name: the page's origin and the Host both say evil.example.com.
    expect(
      (await withEnv(dev, "http://evil.example.com:8787/mcp", { origin: "http://evil.example.com:8787" })).status,
    ).toBe(403);
  });
});

describe("the body and its headers", () => {
  it("answers a non-JSON body with 400 and -32700, a message that is not JSON-RPC with 400 and -32600", async () => {
    const parse = await post("{not json", wireHeaders("2025-11-25"));
    expect(parse.status).toBe(400);
    expect(await parse.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
    for (const [message, id] of [
      [{ jsonrpc: "1.0", id: 8, method: "ping" }, 8],
      [{ jsonrpc: "2.0", id: null, method: "ping" }, null],
      [42, null],
      [{ jsonrpc: "2.0", id: 9.5, method: "ping" }, null],
    ] as const) {
      const res = await post(message, wireHeaders("2025-11-25"));
      expect(res.status, JSON.stringify(message)).toBe(400);
      expect(await res.json()).toMatchObject({ id, error: { code: -32600 } });
    }
    const deep = await post(
      `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":${"[".repeat(5000)}${"]".repeat(5000)}}}`,
      wireHeaders("2025-11-25"),
    );
    expect(deep.status).toBe(400);
    expect(await deep.json()).toMatchObject({ error: { code: -32600, message: expect.stringContaining("nests") } });
  });

  it("takes only JSON: another Content-Type is 415", async () => {
    const res = await post(ping, { ...wireHeaders("2025-11-25"), "content-type": "text/plain" });
    expect(res.status).toBe(415);
    expect(await res.json()).toMatchObject({
      error: { code: -32600, message: expect.stringContaining("application/json") },
    });
    expect(
      (await post(ping, { ...wireHeaders("2025-11-25"), "content-type": "application/json; charset=utf-8" })).status,
    ).toBe(200);
  });

  it("answers 406 when Accept leaves out what the revision answers with", async () => {
    const accept = (value: string, version = "2025-11-25") => post(ping, { ...wireHeaders(version), accept: value });
    for (const value of [
      "application/json",
      "text/event-stream",
      "text/html",
      "application/json, text/event-stream;q=0",
    ]) {
      const res = await accept(value);
      expect(res.status, value).toBe(406);
      expect(await res.json()).toMatchObject({
        id: 7,
        error: { code: -32600, message: expect.stringContaining("Accept") },
      });
    }
    for (const value of ["application/json, text/event-stream", "*/*", "application/*, text/*"])
      expect((await accept(value)).status, value).toBe(200);
    expect(
      (await post(ping, { "content-type": "application/json", "mcp-protocol-version": "2025-11-25" })).status,
    ).toBe(200);
    // 2024-11-05 answered POSTs on a stream of their own: only JSON is asked of its clients here.
    expect((await accept("application/json", "2024-11-05")).status).toBe(200);
    expect((await accept("text/event-stream", "2024-11-05")).status).toBe(406);
  });
});

describe("protocol versions", () => {
  it("answers initialize with the client's version when served, else the newest with a handshake", async () => {
    const asked: [unknown, string][] = [
      ["2024-11-05", "2024-11-05"],
      ["2025-03-26", "2025-03-26"],
      ["2025-06-18", "2025-06-18"],
      ["2025-11-25", "2025-11-25"],
      ["2026-07-28", "2025-11-25"],
      ["1999-01-01", "2025-11-25"],
    ];
    for (const [version, answered] of asked) {
      const { result } = (await (await post(init(version), wireHeaders())).json()) as RpcAnswer<{
        protocolVersion: string;
        serverInfo: Body;
        capabilities: Body;
      }>;
      expect(result!.protocolVersion, String(version)).toBe(answered);
      expect(result!.serverInfo).toMatchObject({ name: "zeitvault", version: "1.0.0" });
      expect(result!.capabilities).toMatchObject({
        tools: { listChanged: false },
        resources: {},
        prompts: {},
        logging: {},
      });
      expect("completions" in result!.capabilities, String(version)).toBe(answered >= "2025-03-26");
      expect("title" in result!.serverInfo, String(version)).toBe(answered >= "2025-06-18");
      expect("icons" in result!.serverInfo, String(version)).toBe(answered >= "2025-11-25");
    }
    const missing = await post({ jsonrpc: "2.0", id: 3, method: "initialize", params: {} }, wireHeaders());
    expect(await missing.json()).toMatchObject({
      id: 3,
      error: { code: -32602, message: expect.stringContaining("protocolVersion") },
    });
  });

  it("checks MCP-Protocol-Version on every request: an unsupported one is 400 with the supported list", async () => {
    for (const version of ["2099-01-01", "2024-10-07", "latest"]) {
      const res = await post(ping, wireHeaders(version));
      expect(res.status, version).toBe(400);
      expect(await res.json()).toMatchObject({
        id: 7,
        error: {
          code: -32022,
          data: {
            requested: version,
            supported: ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
          },
        },
      });
    }
    const get = await bodiless({ "mcp-protocol-version": "2099-01-01" });
    expect(get.status).toBe(400);
  });

  it("refuses batches in every revision but 2025-03-26 (and a headerless request, which is one)", async () => {
    const batch = [ping, { ...ping, id: 8 }];
    for (const version of ["2024-11-05", "2025-06-18", "2025-11-25", "2026-07-28"]) {
      const res = await post(batch, wireHeaders(version));
      expect(res.status, version).toBe(400);
      expect(await res.json()).toMatchObject({
        id: null,
        error: { code: -32600, message: expect.stringContaining("2025-03-26") },
      });
    }
    for (const headers of [wireHeaders("2025-03-26"), wireHeaders()]) {
      const res = await post(batch, headers);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual([
        { jsonrpc: "2.0", id: 7, result: {} },
        { jsonrpc: "2.0", id: 8, result: {} },
      ]);
    }
    expect((await post([], wireHeaders("2025-03-26"))).status).toBe(400);
    expect(
      (
        await post(
          Array.from({ length: 21 }, (_, i) => ({ ...ping, id: i })),
          wireHeaders("2025-03-26"),
        )
      ).status,
    ).toBe(400);
  });
});

describe("GET, DELETE and notifications", () => {
  it("answers GET, DELETE: 405, Allow: POST (no stream to open or session to end), after Origin check", async () => {
    for (const method of ["GET", "DELETE"]) {
      const res = await bodiless({}, method);
      expect(res.status, method).toBe(405);
      expect(res.headers.get("allow")).toBe("POST");
      expect(await res.json()).toMatchObject({ code: "method_not_allowed" });
      expect((await bodiless({ origin: "http://evil.example.com" }, method)).status).toBe(403);
    }
  });

  it("answers notifications and client responses with 202 and no body, never compressed", async () => {
    for (const message of [
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 1, result: {} },
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } },
    ]) {
      const res = await post(message, wireHeaders("2025-11-25"));
      expect(res.status).toBe(202);
      expect(res.headers.get("content-encoding")).toBe("identity");
      expect(await res.text()).toBe("");
    }
  });

  it("answers unknown methods and bad params of a legacy revision in JSON-RPC, with HTTP 200", async () => {
    const rpc = async (message: Body) => {
      const res = await post(message, wireHeaders("2025-11-25"));
      expect(res.status).toBe(200);
      return res.json();
    };
    expect(
      await rpc({ jsonrpc: "2.0", id: 1, method: "resources/subscribe", params: { uri: "zeitvault://prices" } }),
    ).toMatchObject({ id: 1, error: { code: -32601 } });
    expect(await rpc({ jsonrpc: "2.0", id: 2, method: "server/discover" })).toMatchObject({
      id: 2,
      error: { code: -32601 },
    });
    expect(await rpc({ jsonrpc: "2.0", id: 9, method: "tools/call", params: { arguments: {} } })).toMatchObject({
      id: 9,
      error: { code: -32602 },
    });
    const badMeta = {
      jsonrpc: "2.0",
      id: 10,
      method: "tools/call",
      params: { name: "list_prices", _meta: { "x402/payment": "eyJ4NDAy" } },
    };
    expect(await rpc(badMeta)).toMatchObject({
      id: 10,
      error: { code: -32602, message: expect.stringContaining("x402/payment") },
    });
  });
});

describe("malformed params", () => {
  const METHODS = [
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
  ];
  const BAD: unknown[] = [
    null,
    5,
    "x",
    [],
    { cursor: 5 },
    { name: 5, arguments: [] },
    { uri: {} },
    { ref: null, argument: 1 },
    { level: [] },
    { name: "list_prices", _meta: { progressToken: {} } },
  ];

  it("get a JSON-RPC error or a 4xx in every revision, never a 500", async () => {
    for (const version of ["2024-11-05", "2025-03-26", "2025-11-25", "2026-07-28"]) {
      for (const method of METHODS) {
        for (const params of BAD) {
          const meta =
            version === "2026-07-28" && typeof params === "object" && params !== null && !Array.isArray(params)
              ? {
                  _meta: {
                    "io.modelcontextprotocol/protocolVersion": version,
                    "io.modelcontextprotocol/clientCapabilities": {},
                  },
                }
              : {};
          const body = {
            jsonrpc: "2.0",
            id: 1,
            method,
            params: meta._meta ? { ...(params as Body), ...meta } : params,
          };
          const res = await post(body, wireHeaders(version, { "mcp-method": method }));
          const label = `${version} ${method} ${JSON.stringify(params)}`;
          expect(res.status, label).toBeLessThan(500);
          const answer = (await res.json()) as RpcAnswer;
          expect(answer.error ?? answer.result, label).toBeDefined();
          if (answer.error) expect(answer.error.message, label).toEqual(expect.any(String));
        }
      }
    }
  }, 120_000);
});
