/** The two human pages: `/` says what the service is and how to start, `/docs` renders the OpenAPI document. */
import { describe, expect, it } from "vitest";
import { landingPage } from "../../src/site/landing";
import { FAMILIES, KINDS } from "../../src/resources/registry";
import { REDOC_PATH } from "../../src/site/docs";
import { call, json, ORIGIN, type OpenApiDocument } from "../harness";

async function html(path: string): Promise<{ res: Response; text: string }> {
  const res = await call("GET", path);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
  expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
  return { res, text: await res.text() };
}

describe("landing page", () => {
  it("says what the service is, shows both ways to start and links the reference", async () => {
    const { text } = await html("/");
    expect(text).toMatch(/^<!doctype html>\s*<html lang="en">/);
    for (const link of ['href="/docs"', 'href="/openapi.json"', 'href="/v1/prices"']) expect(text).toContain(link);
    for (const fact of ["AI agents", "x402", "credit token", "management token", "TTL", "402"])
      expect(text).toContain(fact);
    expect(text).toContain(`curl -i -X POST \\\n  ${ORIGIN}/v1/counters \\`);
    expect(text).toContain("wrapFetchWithPayment");
    expect(text).not.toMatch(/<script|<link rel="stylesheet"/); // readable with no external asset
  });

  it("lists every kind in a table per family, with what it is and its price as /v1/prices gives it", async () => {
    const { text } = await html("/");
    const prices = (await json(await call("GET", "/v1/prices"))) as {
      operations: { operation: string; price_usd: number; default_ttl_seconds: number | null }[];
    };
    const tables = [...text.matchAll(/<table id="family-(\w+)">([\s\S]*?)<\/table>/g)];
    expect(tables.map((t) => t[1])).toEqual(FAMILIES.filter((f) => KINDS.some((k) => k.family === f)));
    for (const [, family, table] of tables) {
      expect(table).toMatch(/<caption>/);
      const rows = [
        ...table!.matchAll(
          new RegExp(
            /<tr><th scope="row"><code>([\w-]+)<\/code><span class="title">([^<]*)<\/span><\/th>/.source +
              /\s*<td>([\s\S]*?)<\/td><td class="price">([^<]*)<span>([^<]*)<\/span><\/td><\/tr>/.source,
            "g",
          ),
        ),
      ];
      expect(rows.map((r) => r[1])).toEqual(KINDS.filter((k) => k.family === family).map((k) => k.kind));
      for (const [, kind, , what, perDay, create] of rows) {
        const line = prices.operations.find((o) => o.operation === `${kind}.create`)!;
        const days = Math.ceil(line.default_ttl_seconds! / 86400);
        expect(perDay).toBe(`$${line.price_usd} a day`);
        expect(create).toBe(
          `$${Number((line.price_usd * days).toFixed(6))} at create (${days === 1 ? "1 day" : `${days} days`})`,
        );
        expect(what!.length).toBeGreaterThan(10);
      }
    }
    expect(text).not.toContain("Available now:");
  });

  it("escapes what it is configured with", async () => {
    const text = await landingPage('<b>"x"</b>', "https://a.example/?q=<i>").text();
    expect(text).not.toContain("<b>");
    expect(text).not.toContain("<i>");
    expect(text).toContain("&#60;b&#62;&#34;x&#34;&#60;/b&#62;");
  });
});

describe("API reference page", () => {
  it("loads its renderer from this origin only, and names the document without it", async () => {
    const { res, text } = await html("/docs");
    expect(text).toContain('<redoc spec-url="/openapi.json?kinds=all"');
    expect(text).toContain(`${ORIGIN}/openapi.json`);
    expect(text).toContain(`<script src="${REDOC_PATH}"></script>`);
    expect(text).not.toMatch(/(src|href)="(https?:)?\/\//);
    const csp = res.headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/https?:/);
    expect(text).toContain('href="/"');

    const renderer = await call("GET", REDOC_PATH);
    expect(renderer.status).toBe(200);
    expect(renderer.headers.get("content-type")).toMatch(/javascript/);
    expect(renderer.headers.get("cache-control")).toContain("immutable");
    expect((await renderer.text()).length).toBeGreaterThan(100_000);
    expect((await call("GET", "/vendor/nope.js")).status).toBe(404);
  });

  it("keeps both pages out of the OpenAPI document", async () => {
    const doc = await json<OpenApiDocument>(await call("GET", "/openapi.json"));
    expect(doc.paths!["/"]).toBeUndefined();
    expect(doc.paths!["/docs"]).toBeUndefined();
  });
});
