/**
 * /mcp on a real `wrangler dev`, as `npm run dev` serves it: MCP clients that come and go leave
 * nothing red in its log (the 202 and 405 a client cancels unread were the "Broken pipe"), and the
 * official conformance suite passes every scenario that applies, under the Node 22 it needs
 * (tools/mcp-conformance), against the list of expected failures checked in beside it.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWranglerDev } from "../../scripts/wrangler-dev.mjs";
import { expectedFailures, installSuite, runSuite } from "./mcp-conformance";

let server: Awaited<ReturnType<typeof startWranglerDev>>;
beforeAll(async () => {
  [server] = await Promise.all([startWranglerDev(), installSuite()]);
}, 420_000);
afterAll(() => server?.stop());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const redLines = (log: string) => log.split("\n").filter((line) => /Broken pipe|\[ERROR\]|✘/.test(line));

async function creditToken(): Promise<string> {
  const pay = wrapFetchWithPayment(
    fetch,
    registerExactEvmScheme(new x402Client(), { signer: privateKeyToAccount(generatePrivateKey()) }),
  );
  const res = await pay(`${server.url}/v1/credits`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ amount_usd: 1 }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { credit_token: string }).credit_token;
}

describe("MCP on wrangler dev", () => {
  it("leaves no error in the log when clients connect, work, close and abandon a stream", async () => {
    const from = server.output().length;
    const url = new URL(`${server.url}/mcp`);
    // The 1.x client opens its GET stream after initialize and cancels the 405 unread; closing soon after raced it.
    for (const pause of [0, 50, 300, 0, 50, 300, 0, 50]) {
      const client = new Client({ name: "dev-log", version: "1" });
      await client.connect(new StreamableHTTPClientTransport(url));
      await sleep(pause);
      if (pause) await client.listTools();
      await client.close();
    }
    for (let i = 0; i < 10; i++) {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: '{"jsonrpc":"2.0","method":"notifications/initialized"}',
      });
      await res.body?.cancel();
    }
    // A stateless 2026-07-28 client, and a progress stream it gives up on mid-way (2026-07-28: closing it cancels the
    // request).
    const token = await creditToken();
    const modern = new ModernClient(
      { name: "dev-log-v2", version: "2" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await modern.connect(new ModernTransport(url, { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    const queue = (
      await modern.callTool({ name: "create_resource", arguments: { kind: "queues", input: { ttl_seconds: 600 } } })
    ).structuredContent as { id: string; management_token: string };
    const abandon = new AbortController();
    setTimeout(() => abandon.abort(), 1500);
    const lease = {
      name: "call_operation",
      arguments: {
        kind: "queues",
        id: queue.id,
        management_token: queue.management_token,
        operation: "lease",
        input: { wait_seconds: 5 },
      },
    };
    await expect(modern.callTool(lease, { signal: abandon.signal, onprogress: () => undefined })).rejects.toThrow();
    await modern.close();
    await sleep(6000);
    expect(redLines(server.output().slice(from))).toEqual([]);
  }, 120_000);

  it("passes the official conformance suite but for the scenarios that call the suite's own fixtures", async () => {
    const { outcomes, nodeVersion } = await runSuite(`${server.url}/mcp`);
    expect(nodeVersion).toMatch(/^v22\./);
    const expected = await expectedFailures();
    const failed = outcomes.filter((o) => o.failures.length > 0).map((o) => o.scenario);
    const passed = outcomes.filter((o) => o.failures.length === 0).map((o) => o.scenario);
    const warned = outcomes.filter((o) => o.warnings.length > 0).map((o) => `${o.scenario}: ${o.warnings.join("; ")}`);
    console.log(
      `MCP conformance (${nodeVersion}): ${passed.length} passed, ${failed.length} failed, all ` +
        `${expected.size} expected; warnings: ${warned.join(" | ") || "none"}`,
    );

    expect(outcomes.length).toBe(30);
    const unexpected = outcomes.filter((o) => o.failures.length > 0 && !expected.has(o.scenario));
    expect(unexpected, JSON.stringify(unexpected, null, 2)).toEqual([]);
    // A listed scenario that passes is a stale entry: take it off the list.
    expect(passed.filter((s) => expected.has(s))).toEqual([]);
    for (const [scenario, reason] of expected) {
      expect(reason, scenario).toMatch(/fixture/);
      expect(
        outcomes.map((o) => o.scenario),
        scenario,
      ).toContain(scenario);
    }
    // Negotiation, the transport and security are never excused.
    expect(
      [...expected.keys()].filter((s) => /initialize|ping|dns|rebinding|sse|stream|session|version|list$/.test(s)),
    ).toEqual([]);
    expect(passed).toEqual(
      expect.arrayContaining([
        "server-initialize",
        "ping",
        "logging-set-level",
        "tools-list",
        "resources-list",
        "prompts-list",
        "dns-rebinding-protection",
        "server-sse-multiple-streams",
      ]),
    );
  }, 360_000);
});
