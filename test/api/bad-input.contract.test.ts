/**
 * Bad input over every operation, generated from the registry and the published
 * schemas, so a kind is covered the day it is added: each create and each
 * data-plane operation's example, spoilt one field at a time (control characters,
 * times at and before the epoch, numbers at and past their bounds, JSON nested
 * 5,000 deep, unknown fields, empty, malformed and oversized bodies, path
 * parameters with controls). Whatever the answer, it is never a 5xx; a refusal is
 * problem+json with a request id; a number at its bound is refused only for a field
 * that was sent (a default never makes a request invalid); and, from the signed
 * receipts, exactly the calls that answered 2xx were charged.
 */
import { describe, expect, it } from "vitest";
import { KINDS } from "../../src/resources/registry";
import type { AnyKind } from "../../src/kind/kind";
import type { AnyOp } from "../../src/kind/op";
import { buyCredits, call, json, type Receipt } from "../harness";
import { exampleBody, exampleRequest, localized, prepareExample, send, type ExampleRequest } from "./examples";
import type { JsonSchema, OpenApiDoc } from "./schema-body";

/** A schema, or a parameter object (which `resolve` follows the same way). */
type Schema = JsonSchema & { in?: string; name?: string; schema?: JsonSchema };
type Doc = OpenApiDoc;

let docOnce: Promise<Doc> | undefined;
const openapi = () => (docOnce ??= call("GET", "/openapi.json").then((r) => json<Doc>(r)));

function resolve(doc: Doc, schema: Schema | undefined): Schema {
  let s = schema ?? {};
  while (s.$ref)
    s = s.$ref
      .split("/")
      .slice(1)
      .reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], doc) as Schema;
  return s;
}

const isFreeForm = (s: Schema): boolean =>
  s.type === undefined && !s.anyOf && !s.oneOf && !s.enum && s.const === undefined
    ? true
    : (s.anyOf ?? s.oneOf ?? []).some(
        (alt: Schema) => alt.type === "object" && !alt.properties && alt.additionalProperties !== false,
      );

/** JSON text nesting 5,000 arrays deep: written out, since serialising such a value may itself overflow. */
const DEEP = "[".repeat(5000) + "]".repeat(5000);

interface Mutation {
  what: string;
  field?: string;
  /** The JSON body text, or the query/params/headers to use instead of the example's. */
  text?: string;
  input?: Record<string, unknown>;
  params?: Record<string, string>;
  contentType?: string;
  /** What the answer must be besides "not 5xx". */
  expect: "any" | "4xx" | "422-field" | "sent-only";
}

/** The spoilt versions of a JSON object `base` whose schema is `schema`. */
function mutations(
  doc: Doc,
  schema: Schema,
  base: Record<string, unknown>,
  asQuery: boolean,
  maxBytes: number,
): Mutation[] {
  const out: Mutation[] = [];
  const props: Record<string, Schema> = schema.properties ?? {};
  const withField = (field: string, value: unknown) => ({ ...base, [field]: value });
  const textWith = (field: string, raw: string) => {
    const rest = JSON.stringify(Object.fromEntries(Object.entries(base).filter(([k]) => k !== field)));
    return rest === "{}" ? `{"${field}":${raw}}` : `{"${field}":${raw},${rest.slice(1)}`;
  };
  for (const [field, raw] of Object.entries(props)) {
    const s = resolve(doc, raw);
    const types = [s.type, ...(s.anyOf ?? []).map((a: Schema) => resolve(doc, a).type)].flat().filter(Boolean);
    if (types.includes("string")) {
      for (const bad of ["a\u0000b", "line\r\nInjected: 1", "\u0007\u001b[31m\u007f"])
        out.push({ what: `control characters in ${field}`, field, input: withField(field, bad), expect: "any" });
      if (s.format === "date-time" || (s.format === undefined && /_at$/.test(field))) {
        for (const t of ["1970-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "0001-01-01T00:00:00Z"])
          out.push({ what: `${field} = ${t}`, field, input: withField(field, t), expect: "any" });
      }
    }
    if (types.includes("integer") || types.includes("number")) {
      const numeric = s.type
        ? s
        : ((s.anyOf ?? [])
            .map((a: Schema) => resolve(doc, a))
            .find((a: Schema) => a.type === "integer" || a.type === "number") ?? s);
      for (const [bound, step] of [
        ["minimum", -1],
        ["maximum", 1],
      ] as const) {
        const at = numeric[bound];
        if (typeof at !== "number" || !Number.isSafeInteger(at)) continue;
        // A long-poll at its longest would only make the test wait.
        if (!(field === "wait_seconds" && bound === "maximum"))
          out.push({ what: `${field} = its ${bound} ${at}`, field, input: withField(field, at), expect: "sent-only" });
        out.push({ what: `${field} past its ${bound}`, field, input: withField(field, at + step), expect: "4xx" });
      }
    }
    if (!asQuery && isFreeForm(s))
      out.push({ what: `${field} nested 5,000 deep`, field, text: textWith(field, DEEP), expect: "422-field" });
    if (
      !asQuery &&
      s.type === "object" &&
      s.additionalProperties &&
      typeof s.additionalProperties === "object" &&
      resolve(doc, s.additionalProperties).type === "string"
    ) {
      out.push({
        what: `a CR LF in a value of ${field}`,
        field,
        input: withField(field, { "X-Test": "a\r\nInjected: 1" }),
        expect: "4xx",
      });
      out.push({
        what: `a NUL in a value of ${field}`,
        field,
        input: withField(field, { "X-Test": "a\u0000b" }),
        expect: "4xx",
      });
    }
  }
  out.push({ what: "an unknown field", input: { ...base, zz_not_a_field: 1 }, expect: "4xx" });
  if (!asQuery) {
    out.push({ what: "a malformed body", text: '{"a":', expect: "4xx" });
    out.push({ what: "a body that is not an object", text: "[1,2]", expect: "4xx" });
    out.push({ what: "an empty body", text: "", expect: "any" });
    if (maxBytes <= 4 * 1024 * 1024)
      out.push({ what: "a body one byte over the limit", text: `{"zz":"${"x".repeat(maxBytes - 8)}"}`, expect: "4xx" });
  }
  return out;
}

/** The body with only what the schema requires (and, of each "one of" rule, the branch the example takes). */
function requiredOnly(schema: Schema, example: Record<string, unknown>): Record<string, unknown> {
  const branch = (alternatives: Schema[] | undefined) =>
    alternatives?.find((alt) => (alt.required ?? []).every((f: string) => f in example))?.required ?? [];
  const keep = new Set<string>([...(schema.required ?? []), ...branch(schema.oneOf), ...branch(schema.anyOf)]);
  return Object.fromEntries(Object.entries(example).filter(([k]) => keep.has(k)));
}

interface Outcome {
  what: string;
  status: number;
  requestId: string | null;
}

async function check(
  res: Response,
  m: Pick<Mutation, "what" | "field" | "expect">,
  sent: Record<string, unknown> | null,
): Promise<Outcome> {
  const text = await res.text();
  const label = `${m.what}: ${res.status} ${text.slice(0, 300)}`;
  expect(res.status, label).toBeLessThan(500);
  expect(res.headers.get("x-request-id"), label).toMatch(/^req_/);
  if (res.status >= 400) {
    expect(res.headers.get("content-type"), label).toContain("application/problem+json");
    const problem = JSON.parse(text) as { code: string; errors?: { path: string }[] };
    if (m.expect === "422-field") {
      expect(res.status, label).toBe(422);
      expect(problem.errors?.[0]?.path, label).toBe(m.field);
    }
    if (m.expect === "sent-only" && problem.code === "validation_failed" && sent) {
      // A default never makes a request invalid: every field a 422 names was sent.
      for (const e of problem.errors ?? []) expect(Object.keys(sent), label).toContain(e.path.split(".")[0]);
    }
  } else if (m.expect === "4xx" || m.expect === "422-field") {
    expect.fail(`${label}: expected a refusal`);
  }
  return { what: m.what, status: res.status, requestId: res.headers.get("x-request-id") };
}

/**
 * From the signed statement: every charge belongs to a call that answered 2xx, and each of those paid calls was
 * charged.
 */
async function expectChargedExactlyThe2xx(
  token: string,
  outcomes: Outcome[],
  paidStatuses = (o: Outcome) => o.status < 300,
): Promise<void> {
  const res = await call("GET", "/v1/receipts", { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  const charged = new Set((await json<Receipt>(res)).statement.charges.map((c) => c.request_id));
  for (const o of outcomes) {
    if (paidStatuses(o))
      expect(charged.has(o.requestId!), `${o.what} answered ${o.status} but was not charged`).toBe(true);
    else expect(charged.has(o.requestId!), `${o.what} answered ${o.status} and was charged`).toBe(false);
  }
}

async function createWith(kind: AnyKind, token: string, m: { text?: string; input?: unknown }): Promise<Response> {
  const body = m.text !== undefined ? m.text : JSON.stringify(localized(m.input));
  return call("POST", `/v1/${kind.kind}`, {
    body,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
  });
}
async function spoiltOp(
  kind: AnyKind,
  op: AnyOp,
  id: string,
  mgmt: string,
  token: string,
  base: ExampleRequest,
  m: Mutation,
): Promise<Response> {
  if (m.params)
    return send(exampleRequest(kind, op, id, { params: m.params, input: op.example?.input ?? {} }), mgmt, token);
  const req: ExampleRequest = { ...base };
  if (m.text !== undefined)
    return call(req.method, req.path, {
      body: m.text,
      headers: {
        ...req.headers,
        "content-type": m.contentType ?? "application/json",
        authorization: `Bearer ${mgmt}`,
        "x-credit-token": token,
      },
    });
  if (op.method === "get" || op.method === "delete") {
    const path = req.path.split("?")[0]!;
    const query = new URLSearchParams(
      Object.entries(m.input ?? {}).map(([k, v]): [string, string] => [
        k,
        typeof v === "string" ? v : JSON.stringify(v),
      ]),
    );
    return send({ ...req, path: [...query].length ? `${path}?${query}` : path }, mgmt, token);
  }
  return send({ ...req, body: m.input }, mgmt, token);
}

describe.each(KINDS.map((k) => [k.kind, k] as const))("%s", (kindName, kind) => {
  it("create: every spoilt field is refused or accepted, never a 5xx, and only 2xx is charged", async () => {
    const doc = await openapi();
    const { token } = await buyCredits(20);
    const schema = resolve(doc, doc.paths[`/v1/${kindName}`]!.post!.requestBody!.content!["application/json"]!.schema);
    const example = await exampleBody(kind);
    const outcomes: Outcome[] = [];
    const minimal = requiredOnly(schema, example);
    outcomes.push(
      await check(
        await createWith(kind, token, { input: minimal }),
        { what: "only the required fields", expect: "any" },
        minimal,
      ),
    );
    expect(outcomes[0]!.status, "a create with only the required fields").toBe(201);
    for (const m of mutations(doc, schema, example, false, 1024 * 1024)) {
      outcomes.push(await check(await createWith(kind, token, m), m, m.input ?? null));
    }
    await expectChargedExactlyThe2xx(token, outcomes);
  });

  it.each(kind.ops.map((op) => [op.name, op] as const))(
    "%s: every spoilt input is refused or accepted, never a 5xx, and only 2xx is charged",
    async (_name, op) => {
      const doc = await openapi();
      const { token } = await buyCredits(20);
      const created = await call("POST", `/v1/${kindName}`, {
        body: await exampleBody(kind),
        headers: { authorization: `Bearer ${token}` },
      });
      expect(created.status).toBe(201);
      const { id, management_token: mgmt } = await json<{ id: string; management_token: string }>(created);
      const prepared = localized(await prepareExample(kind, op, id, mgmt, token));
      // Spoilt calls never long-poll: once the example has taken what there was, each would wait out its wait_seconds.
      const example = prepared.input?.wait_seconds
        ? { ...prepared, input: { ...prepared.input, wait_seconds: 0 } }
        : prepared;
      const base = exampleRequest(kind, op, id, example);
      const route = doc.paths[`/v1/${kindName}/{id}${op.path}`]![op.method]!;
      const asQuery = op.method === "get" || op.method === "delete";
      const outcomes: Outcome[] = [];
      const spoilt: Mutation[] = [];
      if (op.rawBody) {
        spoilt.push({ what: "an empty upload", text: "", contentType: "application/octet-stream", expect: "any" });
        spoilt.push({
          what: "a content type with a non-ASCII byte",
          text: "x",
          contentType: "text/plain; name=caf\u00e9",
          expect: "4xx",
        });
      } else if (asQuery) {
        const params = (route.parameters ?? [])
          .map((p: Schema) => resolve(doc, p))
          .filter((p: Schema) => p.in === "query");
        const schema = { properties: Object.fromEntries(params.map((p: Schema) => [p.name, p.schema])) };
        spoilt.push(...mutations(doc, schema, (example.input ?? {}) as Record<string, unknown>, true, 0));
      } else {
        const schema = resolve(doc, route.requestBody?.content?.["application/json"]?.schema);
        spoilt.push(
          ...mutations(
            doc,
            schema,
            (example.input ?? {}) as Record<string, unknown>,
            false,
            op.maxBodyBytes ?? 1024 * 1024,
          ),
        );
      }
      for (const name of Object.keys(example.params ?? {})) {
        spoilt.push({
          what: `control characters in the path parameter ${name}`,
          params: { ...example.params, [name]: "a\u0000b\r\n" },
          expect: "4xx",
        });
      }
      for (const m of spoilt) {
        const res = await spoiltOp(kind, op, id, mgmt, token, base, m);
        outcomes.push(await check(res, m, m.input ?? null));
      }
      // Free operations (none today) are charged nothing either way.
      await expectChargedExactlyThe2xx(token, outcomes, (o) => op.priceMicro > 0 && o.status < 300);
    },
  );
});
