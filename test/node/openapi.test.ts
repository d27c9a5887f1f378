/**
 * The OpenAPI document, built by the same app that serves it, passes
 * `redocly lint`, and lists every route of the registry with its errors.
 */
import { execFile } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { buildApp } from "../../src/app";
import { KINDS } from "../../src/resources/registry";

const run = promisify(execFile);
const env = { SERVICE_NAME: "zeitvault", BASE_URL: "https://api.zeitvault.example", AUTH_URL: "" };

async function document(): Promise<Record<string, any>> {
  const res = await buildApp().request("/openapi.json", {}, env);
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, any>;
}

describe("OpenAPI document", () => {
  it("passes redocly lint", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "zeitvault-openapi-"));
    const file = path.join(dir, "openapi.json");
    await writeFile(file, JSON.stringify(await document(), null, 2));
    const result = await run("node_modules/.bin/redocly", ["lint", file, "--format=stylish", "--config=redocly.yaml"], { cwd: process.cwd() }).catch((err) => err);
    expect(result.code ?? 0, `${result.stdout}\n${result.stderr}`).toBe(0);
  });

  it("is OpenAPI 3.1 and lists every kind's create and operations, with problem responses", async () => {
    const doc = await document();
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info).toMatchObject({ title: "zeitvault", version: "1.0.0" });
    for (const kind of KINDS) {
      const create = doc.paths[`/v1/${kind.kind}`].post;
      expect(create.responses).toHaveProperty("201");
      expect(create.responses["402"].content["application/problem+json"].schema.$ref).toBe("#/components/schemas/PaymentRequired");
      expect(create.responses["422"]).toBeDefined();
      for (const op of kind.ops) expect(doc.paths[`/v1/${kind.kind}/{id}${op.path}`][op.method]).toBeDefined();
    }
    for (const p of ["/v1/resources/{id}", "/v1/resources/{id}/extend", "/v1/resources/{id}/export", "/v1/credits", "/v1/credits/balance", "/v1/credits/subtokens", "/v1/prices"]) {
      expect(doc.paths[p], p).toBeDefined();
    }
    // Every event type and every request a kind sends is listed under webhooks.
    const webhooks = Object.keys(doc.webhooks ?? {});
    expect(webhooks).toEqual(expect.arrayContaining(["resource.expiring", "resource.expired", "resource.cancelled"]));
    for (const kind of KINDS) for (const type of Object.keys(kind.sends ?? {})) expect(webhooks).toContain(type);
    expect(Object.keys(doc.components.securitySchemes)).toEqual(expect.arrayContaining(["credit", "creditHeader", "management", "x402", "x402v2"]));
  });
});
