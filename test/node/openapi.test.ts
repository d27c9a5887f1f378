/**
 * The OpenAPI document, built by the same app that serves it: it passes `redocly
 * lint` whole and sliced, lists every route of the registry with its errors, stays
 * small (the whole, an index, ≤ 300 KB; a one-kind slice ≤ 40 KB), carries the registry's example
 * for every request, and a typed client generated from a slice by openapi-typescript
 * compiles against a call to that kind. /llms.txt links every kind's slice.
 */
import { execFile } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import type {
  MediaTypeObject,
  OpenAPIObject,
  OperationObject,
  ParameterObject,
  PathItemObject,
  ReferenceObject,
  ResponseObject,
  SchemaObject,
} from "openapi3-ts/oas31";
import { describe, expect, it } from "vitest";
import { buildApp } from "../../src/app";
import { KINDS } from "../../src/resources/registry";
import { ownPathsOf } from "../../src/resources/kind-routes";

const run = promisify(execFile);
const env = {
  SERVICE_NAME: "zeitvault",
  BASE_URL: "https://api.zeitvault.example",
  AUTH_URL: "",
  MIN_PURCHASE_USD: "0.25",
};
const app = buildApp();

type Doc = OpenAPIObject;

async function fetchText(url: string): Promise<{ status: number; text: string; type: string | null }> {
  const res = await app.request(url, {}, env);
  return { status: res.status, text: await res.text(), type: res.headers.get("content-type") };
}

async function document(query = ""): Promise<{ doc: Doc; bytes: number }> {
  const { status, text } = await fetchText(`/openapi.json${query}`);
  expect(status, text.slice(0, 300)).toBe(200);
  return { doc: JSON.parse(text) as Doc, bytes: new TextEncoder().encode(text).length };
}

async function scratch(): Promise<string> {
  return mkdtemp(path.join(tmpdir(), "zeitvault-openapi-"));
}

async function lint(doc: Doc): Promise<void> {
  const file = path.join(await scratch(), "openapi.json");
  await writeFile(file, JSON.stringify(doc, null, 2));
  const result = await run("node_modules/.bin/redocly", ["lint", file, "--format=stylish", "--config=redocly.yaml"], {
    cwd: process.cwd(),
  }).catch((err) => err);
  const output = `${result.stdout}\n${result.stderr}`;
  expect(result.code ?? 0, output).toBe(0);
  // Clean means no warnings either.
  expect(output, output).not.toMatch(/^\s*\d+:\d+\s+warning\s/m);
}

const METHODS = ["get", "put", "post", "delete", "patch"] as const;
const operations = (doc: Doc) =>
  Object.entries<PathItemObject>(doc.paths ?? {}).flatMap(([p, item]) =>
    METHODS.flatMap((m) => (item[m] ? [{ path: p, method: m, op: item[m] }] : [])),
  );
/** The object a `$ref` names in the document (`#/components/…`), or `node` itself when it is no reference. */
const resolve = <T extends object>(doc: Doc, node: T | ReferenceObject): T =>
  ("$ref" in node
    ? node.$ref
        .split("/")
        .slice(1)
        .reduce<unknown>((n, k) => (n as Record<string, unknown>)[k], doc)
    : node) as T;
/** The operation at `path` and `method`, which the test expects to be there. */
const operation = (doc: Doc, path: string, method: (typeof METHODS)[number]): OperationObject =>
  doc.paths![path]![method]!;
/** An operation's response for `status`, the `$ref` followed. */
const response = (doc: Doc, op: OperationObject, status: string) =>
  resolve<ResponseObject>(doc, op.responses![status] as ResponseObject | ReferenceObject);
/** The JSON request body an operation takes. */
const jsonBody = (op: OperationObject): MediaTypeObject =>
  (op.requestBody as { content: Record<string, MediaTypeObject> }).content["application/json"]!;

describe("OpenAPI document", () => {
  it("passes redocly lint, whole and as a slice", async () => {
    await lint((await document()).doc);
    await lint((await document("?kinds=counters,queues")).doc);
  });

  it("is OpenAPI 3.1 and lists every kind's create and operations, with problem responses", async () => {
    const { doc } = await document();
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info).toMatchObject({ title: "zeitvault", version: "1.0.0" });
    for (const kind of KINDS) {
      const create = operation(doc, `/v1/${kind.kind}`, "post");
      expect(create.responses).toHaveProperty("201");
      expect(response(doc, create, "402").content!["application/problem+json"]!.schema).toMatchObject({
        $ref: "#/components/schemas/PaymentRequired",
      });
      expect(create.responses!["422"]).toBeDefined();
      for (const op of kind.ops) expect(doc.paths![`/v1/${kind.kind}/{id}${op.path}`]![op.method]).toBeDefined();
    }
    for (const p of [
      "/v1/resources/{id}",
      "/v1/resources/{id}/extend",
      "/v1/resources/{id}/export",
      "/v1/credits",
      "/v1/credits/balance",
      "/v1/credits/subtokens",
      "/v1/prices",
      "/mcp",
      "/openapi.json",
      "/llms.txt",
    ]) {
      expect(doc.paths![p], p).toBeDefined();
    }
    // Every event type and every request a kind sends is listed under webhooks.
    const webhooks = Object.keys(doc.webhooks ?? {});
    expect(webhooks).toEqual(expect.arrayContaining(["resource.expiring", "resource.expired", "resource.cancelled"]));
    for (const kind of KINDS) for (const type of Object.keys(kind.sends ?? {})) expect(webhooks).toContain(type);
    expect(Object.keys(doc.components!.securitySchemes!)).toEqual(
      expect.arrayContaining(["credit", "creditHeader", "management", "x402", "x402v2"]),
    );
  });

  it("refers to shared responses and parameters, stays small: whole ≤ 300 KB, one-kind slice ≤ 40 KB", async () => {
    const { doc, bytes } = await document();
    expect(bytes).toBeLessThanOrEqual(300 * 1024);
    for (const { op } of operations(doc)) {
      for (const [status, answer] of Object.entries<ResponseObject | ReferenceObject>(op.responses!))
        if (/^[45]/.test(status))
          expect("$ref" in answer ? answer.$ref : undefined, `${op.operationId} ${status}`).toMatch(
            /^#\/components\/responses\//,
          );
    }
    for (const kind of KINDS) {
      const slice = await document(`?kinds=${kind.kind}`);
      expect(slice.bytes, kind.kind).toBeLessThanOrEqual(40 * 1024);
      const own = Object.keys(slice.doc.paths!).filter((p) => !/^\/v1\/(resources|downloads|\{kind\})\//.test(p));
      expect(
        own.every((p) => p === `/v1/${kind.kind}` || p.startsWith(`/v1/${kind.kind}/`) || ownPathsOf(kind).includes(p)),
        own.join(" "),
      ).toBe(true);
    }
    // The whole leaves out fields' descriptions (a quarter of it); every slice, and ?kinds=all, keeps them.
    /** The `min` field of the counters' create schema. */
    const min = (d: Doc) => (d.components!.schemas!.CreateCounters as SchemaObject).properties!.min!;
    expect(min(doc)).not.toHaveProperty("description");
    expect(min((await document("?kinds=counters")).doc).description).toBeTruthy();
    const all = await document("?kinds=all");
    expect(Object.keys(all.doc.paths!).length).toBe(Object.keys(doc.paths!).length);
    expect(min(all.doc).description).toBeTruthy();
    // The whole is an index: success bodies' schemas and the shared 409/413/415 are in the slices.
    const increment = (d: Doc) => operation(d, "/v1/counters/{id}/increment", "post");
    expect(response(doc, increment(doc), "200").content!["application/json"]!.schema).toBeUndefined();
    expect(response(all.doc, increment(all.doc), "200").content!["application/json"]!.schema).toBeDefined();
    expect(increment(doc).responses!["409"]).toBeUndefined();
    expect(increment(all.doc).responses!["409"]).toBeDefined();
    expect(response(doc, increment(doc), "default").description).toMatch(/409.*413.*415/s);
    // A kind's own routes beyond its resources (the notary's TSA certificate) are in its slice.
    expect(Object.keys((await document("?kinds=notary")).doc.paths!)).toEqual(
      expect.arrayContaining(["/v1/tsa/certificate.pem", "/v1/tsa/certificate.der"]),
    );
    const family = await document("?kinds=time");
    expect(Object.keys(family.doc.paths!)).toEqual(expect.arrayContaining(["/v1/wakeups", "/v1/attest"]));
    const unknown = await fetchText("/openapi.json?kinds=nope");
    expect(unknown.status).toBe(400);
    expect(JSON.parse(unknown.text)).toMatchObject({ code: "invalid_request", errors: [{ path: "query.kinds" }] });
  });

  it("gives every request body and parameter a valid example: the registry's, for every kind", async () => {
    const { doc } = await document();
    const missing: string[] = [];
    for (const { path: p, method, op } of operations(doc)) {
      const where = `${method.toUpperCase()} ${p}`;
      const content = op.requestBody && !("$ref" in op.requestBody) ? op.requestBody.content : {};
      for (const [type, media] of Object.entries(content))
        if (media.example === undefined) missing.push(`${where} ${type}`);
      const params = (op.parameters ?? []).map((x) => resolve<ParameterObject>(doc, x));
      const example = (x: ParameterObject): unknown => x.example ?? (x.schema as SchemaObject | undefined)?.example;
      for (const param of params.filter((x) => x.in === "path"))
        if (example(param) === undefined) missing.push(`${where} ${param.name}`);
      const query = params.filter((x) => x.in === "query");
      if (query.length && !query.some((x) => example(x) !== undefined))
        missing.push(`${where}: no query parameter has an example`);
    }
    expect(missing).toEqual([]);
    for (const kind of KINDS) {
      expect(jsonBody(operation(doc, `/v1/${kind.kind}`, "post")).example).toEqual(kind.example);
      for (const op of kind.ops.filter(
        (o) => o.example?.input && (o.method === "post" || o.method === "put") && !o.rawBody,
      )) {
        expect(jsonBody(operation(doc, `/v1/${kind.kind}/{id}${op.path}`, op.method)).example).toEqual(
          op.example!.input,
        );
      }
    }
  });

  it("states cross-field rules as JSON Schema: 'exactly one of' is a oneOf", async () => {
    const { doc } = await document();
    const wakeup = resolve<SchemaObject>(doc, jsonBody(operation(doc, "/v1/wakeups", "post")).schema!);
    expect(wakeup.oneOf).toEqual([{ required: ["at"] }, { required: ["delay_seconds"] }]);
    expect(wakeup.additionalProperties).toBe(false);
  });

  it("gives a typed client, generated from a slice by openapi-typescript, that compiles against a call", async () => {
    const dir = await scratch();
    const specFile = path.join(dir, "counters.json");
    await writeFile(specFile, JSON.stringify((await document("?kinds=counters")).doc));
    // Fields with a default are optional to send: openapi-typescript reads them so with --default-non-nullable false.
    await run(
      "node_modules/.bin/openapi-typescript",
      [specFile, "--default-non-nullable", "false", "-o", path.join(dir, "counters.d.ts")],
      { cwd: process.cwd() },
    );
    const client = path.join(dir, "client.ts");
    const fetchModule = path.join(process.cwd(), "node_modules/openapi-fetch/dist/index.mjs");
    await writeFile(
      client,
      `import createClient from ${JSON.stringify(fetchModule)};
import type { paths } from "./counters";
const api = createClient<paths>({ baseUrl: "https://api.zeitvault.example" });
export async function demo(token: string, mgmt: string, id: string): Promise<number> {
  const created = await api.POST("/v1/counters", {
    body: { max: 10, ttl_seconds: 3600 },
    headers: { Authorization: \`Bearer \${token}\` },
  });
  if (created.data) void created.data.management_token;
  const inc = await api.POST("/v1/counters/{id}/increment", {
    params: { path: { id } },
    body: { by: 2 },
    headers: { Authorization: \`Bearer \${mgmt}\`, "X-CREDIT-TOKEN": token },
  });
  if (inc.error) throw new Error(inc.error.detail);
  return inc.data.value;
}
// A wrong field must not compile.
type CreateBody = paths["/v1/counters"]["post"]["requestBody"]["content"]["application/json"];
// @ts-expect-error: counters take no "colour"
export const wrong: CreateBody = { colour: "red" };
`,
    );
    await writeFile(
      path.join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: "ES2022",
          module: "ESNext",
          moduleResolution: "Bundler",
          lib: ["ES2022", "DOM"],
          skipLibCheck: true,
        },
        files: ["client.ts"],
      }),
    );
    const result = await run("node_modules/.bin/tsc", ["-p", path.join(dir, "tsconfig.json")], {
      cwd: process.cwd(),
    }).catch((err) => err);
    expect(result.code ?? 0, `${result.stdout}${result.stderr}`).toBe(0);
  });
});

describe("/llms.txt", () => {
  it("says what the service is, how to pay, and links every kind's slice", async () => {
    const { status, text, type } = await fetchText("/llms.txt");
    expect(status).toBe(200);
    expect(type).toContain("text/markdown");
    expect(text).toMatch(/^# zeitvault\n\n> /);
    expect(text).toContain("x402");
    for (const kind of KINDS)
      expect(text).toContain(`](https://api.zeitvault.example/openapi.json?kinds=${kind.kind}):`);
  });
});
