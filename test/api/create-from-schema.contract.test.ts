/**
 * Every kind can be created from its published schema alone: for each kind in the registry, the
 * create body is built from the OpenAPI document's request schema by a small generator
 * (./schema-body.ts: required fields, first alternatives, declared sizes, formats and patterns, and
 * for a field naming another resource, one of the kinds it says it takes, made the same way) and
 * the create answers 201. A 422 here is a rule the validator enforces that the schema does not state.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { KINDS } from "../../src/resources/registry";
import { bodyFromSchema, fromPattern, type JsonSchema, type OpenApiDoc } from "./schema-body";
import { buyCredits, call, json } from "../harness";

type Doc = OpenApiDoc;
let doc: Doc;
let token: string;

const createSchema = (kind: string): JsonSchema =>
  doc.paths[`/v1/${kind}`]!.post!.requestBody!.content!["application/json"]!.schema!;

/** Creates a resource of `kind` from its schema; answers the response and the body sent. */
async function create(kind: string, depth = 0): Promise<{ res: Response; body: unknown }> {
  if (depth > 3) throw new Error(`${kind}: references nest too deep`);
  const body = await bodyFromSchema(doc, createSchema(kind), async (kinds) => {
    const made = await create(kinds[0]!, depth + 1);
    expect(made.res.status, `${kinds[0]} (named by ${kind}): ${JSON.stringify(made.body)}`).toBe(201);
    return (await json<{ management_token: string }>(made.res)).management_token;
  });
  return { res: await call("POST", `/v1/${kind}`, { body, headers: { authorization: `Bearer ${token}` } }), body };
}

beforeAll(async () => {
  doc = await json<Doc>(await call("GET", "/openapi.json?kinds=all"));
  token = (await buyCredits(25)).token;
});

describe("the generator", () => {
  it("fills patterns with their first alternatives and fewest repetitions", () => {
    expect(fromPattern("^zvm_[0-9A-Za-z]+$")).toBe("zvm_0");
    expect(fromPattern("^(\\*\\.)?[^*/\\\\?#@\\s]+$")).toBe("a");
    expect(fromPattern("^[a-z][a-z0-9_]{0,31}$", 3)).toBe("aaaa");
    expect(fromPattern("^(json|slack)://[^\\u0000-\\u0020]+$")).toBe("json://a");
  });
});

describe.each(KINDS.map((k) => [k.kind] as const))("%s", (kind) => {
  it("is created (201) from a body built from its published create schema alone", async () => {
    const { res, body } = await create(kind);
    const text = await res.text();
    expect(res.status, `${JSON.stringify(body)} → ${text}`).toBe(201);
  });
});
