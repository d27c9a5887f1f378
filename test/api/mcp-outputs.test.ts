/**
 * Every operation's published example, run as its typed MCP tool by the v2 client, which checks
 * each structuredContent against the tool's outputSchema: the output schemas (2025-06-18 on) say
 * what the routes really answer. What an example needs first (`after`, arrivals) runs over REST,
 * as in the examples contract; an example that sends request headers has no tool form and is left out.
 */
import { describe, expect, it } from "vitest";
import { KINDS } from "../../src/resources/registry";
import type { AnyKind } from "../../src/kind/kind";
import type { AnyOp } from "../../src/kind/op";
import { connectV2, type ListedTool, type ToolAnswer } from "./mcp-clients";
import { localized, prepareExample, resourceFixture } from "./examples";

const slug = (kind: string) => kind.replace(/-/g, "_");

/**
 * Each operation on a resource of its own, made from the kind's example (as the examples contract
 * does), by a client whose bearer is that resource's credit token; its tools/list compiles the
 * validators it checks each answer with.
 */
async function runOp(kind: AnyKind, op: AnyOp) {
  const { id, mgmt, token } = await resourceFixture(kind);
  const example = await prepareExample(kind, op, id, mgmt, token);
  const { client } = await connectV2({ bearer: token, toolsets: kind.kind });
  const name = `${slug(kind.kind)}_${op.name}`;
  const tool = ((await client.listTools()).tools as ListedTool[]).find((t) => t.name === name)!;
  const input = localized(example.input ?? {});
  const nested = "body" in (tool.inputSchema.properties ?? {}) && !("body" in input);
  const args = { id, management_token: mgmt, ...example.params, ...(nested ? { body: input } : input) };
  const answer = (await client.callTool({ name, arguments: args })) as unknown as ToolAnswer;
  expect(answer.isError, `${name}: ${answer.content[0]?.text}`).toBeFalsy();
  expect(tool.outputSchema, name).toMatchObject({ type: "object" });
}

describe.each(KINDS.map((k) => [k.kind, k] as const))("%s", (_name, kind) => {
  const ops = kind.ops.filter((op) => !op.rawBody && !op.example?.headers);
  it.each(ops.map((op) => [op.name, op] as const))(
    "%s: its answer fits the tool's outputSchema",
    (_op, op) => runOp(kind, op),
    60_000,
  );
});
