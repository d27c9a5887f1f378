/**
 * What a good MCP server has beside tools, through the official clients and raw requests:
 * resources (the price list, /llms.txt, each kind's description) and their template, the
 * use_kind prompt, completion of kind and operation names, logging/setLevel where it exists,
 * cursor pagination, and progress notifications of a call that waits.
 */
import { describe, expect, it } from "vitest";
import { KINDS } from "../../src/resources/registry";
import { buyCredits, call, json, type OpenApiDocument } from "../harness";
import {
  connectV1,
  connectV2,
  modern,
  post,
  wireHeaders,
  type Body,
  type RpcAnswer,
  type ToolPage,
} from "./mcp-clients";

const legacy = async <R = Body>(method: string, params: Body = {}, version = "2025-11-25") =>
  (await (await post({ jsonrpc: "2.0", id: 1, method, params }, wireHeaders(version))).json()) as RpcAnswer<R>;

describe("resources", () => {
  it("lists the price list, llms.txt and every kind's description, and reads each", async () => {
    const { client } = await connectV1();
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual([
      "zeitvault://llms.txt",
      "zeitvault://prices",
      ...KINDS.map((k) => `zeitvault://kinds/${k.kind}`),
    ]);
    expect(resources[1]).toMatchObject({
      name: "prices",
      title: "Price list",
      mimeType: "application/json",
      icons: expect.any(Array),
    });
    const prices = await client.readResource({ uri: "zeitvault://prices" });
    expect(JSON.parse((prices.contents[0] as { text: string }).text)).toEqual(
      await json(await call("GET", "/v1/prices")),
    );
    const llms = await client.readResource({ uri: "zeitvault://llms.txt" });
    expect(llms.contents[0]).toMatchObject({
      mimeType: "text/markdown",
      text: await (await call("GET", "/llms.txt")).text(),
    });
    const kind = await client.readResource({ uri: "zeitvault://kinds/counters" });
    expect(JSON.parse((kind.contents[0] as { text: string }).text)).toMatchObject({
      kind: "counters",
      operations: expect.any(Array),
    });
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates).toEqual([
      expect.objectContaining({ uriTemplate: "zeitvault://kinds/{kind}", mimeType: "application/json" }),
    ]);
  });

  it("answers an unknown URI with each revision's code: -32002 until 2025-11-25, -32602 in 2026-07-28", async () => {
    expect(await legacy("resources/read", { uri: "zeitvault://kinds/nope" })).toMatchObject({
      error: { code: -32002, data: { uri: "zeitvault://kinds/nope" } },
    });
    expect(await legacy("resources/read", { uri: "https://example.com/" }, "2024-11-05")).toMatchObject({
      error: { code: -32002 },
    });
    expect(await (await modern(2, "resources/read", { uri: "zeitvault://kinds/nope" })).json()).toMatchObject({
      error: { code: -32602 },
    });
    expect(await legacy("resources/read", {})).toMatchObject({ error: { code: -32602 } });
    const read = (await (await modern(3, "resources/read", { uri: "zeitvault://prices" })).json()) as Body;
    expect(read.result).toMatchObject({
      resultType: "complete",
      ttlMs: expect.any(Number),
      cacheScope: "public",
      contents: [{ uri: "zeitvault://prices" }],
    });
  });

  it("shows each revision the fields it has: no title before 2025-06-18, no icons before 2025-11-25", async () => {
    const [old] = (await legacy<{ resources: Body[] }>("resources/list", {}, "2025-03-26")).result!.resources;
    expect(Object.keys(old!).sort()).toEqual(["description", "mimeType", "name", "uri"]);
    const [mid] = (await legacy<{ resources: Body[] }>("resources/list", {}, "2025-06-18")).result!.resources;
    expect(mid).toHaveProperty("title");
    expect(mid).not.toHaveProperty("icons");
  });
});

describe("the use_kind prompt and completion", () => {
  it("lists and gets use_kind, the kind's description embedded", async () => {
    const { client } = await connectV1();
    const { prompts } = await client.listPrompts();
    expect(prompts).toEqual([
      expect.objectContaining({
        name: "use_kind",
        title: "Use a kind",
        arguments: [
          expect.objectContaining({ name: "kind", required: true }),
          expect.objectContaining({ name: "operation", required: false }),
        ],
      }),
    ]);
    const got = await client.getPrompt({ name: "use_kind", arguments: { kind: "queues", operation: "lease" } });
    expect(got.messages[0]!.content).toMatchObject({ type: "text", text: expect.stringContaining("lease") });
    expect(got.messages[1]!.content).toMatchObject({
      type: "resource",
      resource: { uri: "zeitvault://kinds/queues", mimeType: "application/json" },
    });
    for (const args of [{}, { kind: "nope" }, { kind: "queues", operation: "increment" }]) {
      expect(await legacy("prompts/get", { name: "use_kind", arguments: args })).toMatchObject({
        error: { code: -32602 },
      });
    }
    expect(await legacy("prompts/get", { name: "nope" })).toMatchObject({ error: { code: -32602 } });
  });

  it("completes kind names, and operation names of the kind already chosen", async () => {
    const { client } = await connectV1();
    const kinds = await client.complete({
      ref: { type: "ref/prompt", name: "use_kind" },
      argument: { name: "kind", value: "w" },
    });
    expect(kinds.completion).toEqual({
      values: KINDS.map((k) => k.kind).filter((k) => k.startsWith("w")),
      total: 3,
      hasMore: false,
    });
    const ops = await client.complete({
      ref: { type: "ref/prompt", name: "use_kind" },
      argument: { name: "operation", value: "le" },
      context: { arguments: { kind: "queues" } },
    });
    expect(ops.completion.values).toEqual(["lease"]);
    const anyOps = await client.complete({
      ref: { type: "ref/prompt", name: "use_kind" },
      argument: { name: "operation", value: "" },
    });
    expect(anyOps.completion.values.length).toBeLessThanOrEqual(100);
    expect(anyOps.completion.hasMore).toBe(anyOps.completion.total! > 100);
    const template = await client.complete({
      ref: { type: "ref/resource", uri: "zeitvault://kinds/{kind}" },
      argument: { name: "kind", value: "COUNT" },
    });
    expect(template.completion.values).toEqual(["counters"]);
    for (const ref of [
      { type: "ref/prompt", name: "test_prompt_with_arguments" },
      { type: "ref/resource", uri: "zeitvault://other/{x}" },
      { type: "ref/tool", name: "x" },
    ]) {
      expect(await legacy("completion/complete", { ref, argument: { name: "kind", value: "" } })).toMatchObject({
        error: { code: -32602 },
      });
    }
  });
});

describe("logging and pagination", () => {
  it("accepts logging/setLevel where the revision has it, and refuses a level that is not one", async () => {
    const { client } = await connectV1();
    expect(await client.setLoggingLevel("warning")).toEqual({});
    expect(await legacy("logging/setLevel", { level: "loud" })).toMatchObject({ error: { code: -32602 } });
    expect(await legacy("logging/setLevel", { level: "debug" }, "2024-11-05")).toMatchObject({ result: {} });
    expect((await modern(1, "logging/setLevel", { level: "debug" })).status).toBe(404);
  });

  it("pages tools/list with an opaque cursor, and refuses one it did not hand out", async () => {
    const first = (await (
      await post({ jsonrpc: "2.0", id: 1, method: "tools/list" }, wireHeaders("2025-11-25"), "?toolsets=all")
    ).json()) as RpcAnswer<ToolPage>;
    expect(first.result!.tools).toHaveLength(100);
    const second = (await (
      await post(
        { jsonrpc: "2.0", id: 2, method: "tools/list", params: { cursor: first.result!.nextCursor } },
        wireHeaders("2025-11-25"),
        "?toolsets=all",
      )
    ).json()) as RpcAnswer<ToolPage>;
    expect(second.result!.tools[0]!.name).not.toBe(first.result!.tools[0]!.name);
    for (const cursor of ["nonsense", btoa("o:-1"), btoa("o:99999"), 5]) {
      const res = (await (
        await post(
          { jsonrpc: "2.0", id: 3, method: "tools/list", params: { cursor } },
          wireHeaders("2025-11-25"),
          "?toolsets=all",
        )
      ).json()) as Body;
      expect(res, String(cursor)).toMatchObject({ id: 3, error: { code: -32602 } });
    }
  });
});

describe("progress of a call that waits", () => {
  const leaseArgs = (id: string, management_token: string) => ({
    id,
    management_token,
    max_messages: 1,
    wait_seconds: 2,
  });

  async function emptyQueue() {
    const { token } = await buyCredits(1);
    const { client } = await connectV1({ bearer: token });
    const created = (await client.callTool({ name: "create_queues", arguments: { ttl_seconds: 3600 } })) as {
      structuredContent: Body;
    };
    return {
      token,
      id: created.structuredContent.id as string,
      mgmt: created.structuredContent.management_token as string,
    };
  }

  it(
    "streams notifications/progress then the result to the 1.x and v2 clients, " +
      "a long-poll's wait_seconds as the total",
    async () => {
      const { token, id, mgmt } = await emptyQueue();
      const v1 = await connectV1({ bearer: token, toolsets: "queues" });
      const seen: { progress: number }[] = [];
      const leased = await v1.client.callTool({ name: "queues_lease", arguments: leaseArgs(id, mgmt) }, undefined, {
        onprogress: (p) => seen.push(p),
      });
      expect(leased).toMatchObject({ structuredContent: { items: [] } });
      expect(seen.length).toBeGreaterThanOrEqual(2);
      expect(seen[0]).toMatchObject({ progress: 0, total: 2, message: expect.stringContaining("Waiting") });
      expect(seen.map((p) => p.progress)).toEqual([...seen.map((p) => p.progress)].sort((a, b) => a - b));

      const v2 = await connectV2({ bearer: token });
      const seen2: { progress: number }[] = [];
      const viaGeneric = await v2.client.callTool(
        {
          name: "call_operation",
          arguments: { kind: "queues", id, management_token: mgmt, operation: "lease", input: { wait_seconds: 2 } },
        },
        { onprogress: (p) => seen2.push(p) },
      );
      expect(viaGeneric).toMatchObject({ structuredContent: { items: [] } });
      expect(seen2.length).toBeGreaterThanOrEqual(2);
    },
  );

  it("answers as an event stream only when asked, and never in 2024-11-05", async () => {
    const { token, id, mgmt } = await emptyQueue();
    const headers = (version: string) => wireHeaders(version, { authorization: `Bearer ${token}` });
    const message = (meta: Body) => ({
      jsonrpc: "2.0",
      id: 9,
      method: "tools/call",
      params: { name: "queues_lease", arguments: leaseArgs(id, mgmt), _meta: meta },
    });
    const streamed = await post(message({ progressToken: "p1" }), headers("2025-06-18"));
    expect(streamed.headers.get("content-type")).toBe("text/event-stream");
    const events = (await streamed.text())
      .split("\n\n")
      .filter(Boolean)
      .map((e) => JSON.parse(e.replace(/^event: message\ndata: /, "")) as Body);
    expect(events[0]).toMatchObject({
      method: "notifications/progress",
      params: { progressToken: "p1", progress: 0, total: 2 },
    });
    expect(events.at(-1)).toMatchObject({ jsonrpc: "2.0", id: 9, result: { structuredContent: { items: [] } } });
    expect((await post(message({}), headers("2025-06-18"))).headers.get("content-type")).toContain("application/json");
    const old = await post(message({ progressToken: "p2" }), headers("2024-11-05"));
    expect(old.headers.get("content-type")).toContain("application/json");
    // A call that does not wait answers at once, token or not.
    const quick = await post(
      {
        jsonrpc: "2.0",
        id: 10,
        method: "tools/call",
        params: { name: "list_prices", arguments: {}, _meta: { progressToken: 3 } },
      },
      headers("2025-11-25"),
    );
    expect(quick.headers.get("content-type")).toContain("application/json");
  });
});

describe("what the documents say of /mcp", () => {
  it("names every revision served in the OpenAPI description and /llms.txt, as discover does", async () => {
    const revisions = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
    const doc = await json<OpenApiDocument>(await call("GET", "/openapi.json?kinds=all"));
    const llms = await (await call("GET", "/llms.txt")).text();
    for (const revision of revisions) {
      expect(doc.paths!["/mcp"]!.post!.description, revision).toContain(revision);
      expect(llms, revision).toContain(revision);
    }
    const discovered = (
      (await (await modern(1, "server/discover")).json()) as RpcAnswer<{ supportedVersions: string[] }>
    ).result!.supportedVersions;
    expect(discovered).toEqual(revisions);
  });
});
